package io.roster.server.cluster;

import io.roster.server.config.ClusterSettings;
import io.roster.server.config.ServerConfig;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/** The Ratis properties a member's Raft server, log client and group probe are built with. Stateless. */
final class RaftSettings {

  private RaftSettings() {}

  /**
   * Ratis settings, chosen for a registry's small, ephemeral entries (docs/cluster.md): the log
   * is kept on disk under {@code --data-dir}/raft/, flushed without waiting (the owners of
   * ephemeral entries redo them after a full-cluster restart), with a small segment cache;
   * election timeouts of 0.7-1.4 s with pre-vote (decision 87).
   */
  static RaftProperties properties(ClusterSettings config, Path dataDir, String memberId, String peerHost) {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, new CommitCappedRpc());
    GrpcConfigKeys.Server.setHost(p, peerHost);
    GrpcConfigKeys.Server.setPort(p, config.peerPort());
    Path dir = io.roster.server.store.DataDir.raft(dataDir, memberId);
    RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
    // Every entry is on the disk before it counts towards a commit (docs/persistence.md): settings,
    // holds and persistent instances have no owner to register them again. The flush runs on a
    // thread of its own, so that appends go on meanwhile and one flush covers what gathered.
    RaftServerConfigKeys.Log.setUnsafeFlushEnabled(p, false);
    RaftServerConfigKeys.Log.setAsyncFlushEnabled(p, true);
    RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf("16MB"));
    RaftServerConfigKeys.Log.setSegmentCacheNumMax(p, 2);
    // An entry is at most ~1 MiB of commands (Proposer.MAX_BATCH_BYTES), or one command as large
    // as a client's frame; the write buffer is a direct buffer allocated once, so it stays small.
    RaftServerConfigKeys.Log.Appender.setBufferByteLimit(p, SizeInBytes.valueOf("4MB"));
    RaftServerConfigKeys.Log.setWriteBufferSize(p, SizeInBytes.valueOf("4100KB"));
    GrpcConfigKeys.setMessageSizeMax(p, SizeInBytes.valueOf("32MB"));
    RaftServerConfigKeys.RetryCache.setExpiryTime(p, TimeDuration.valueOf(30, TimeUnit.SECONDS));
    RaftServerConfigKeys.setStagingTimeout(p, TimeDuration.valueOf(ClusterNode.STAGING_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
    // A snapshot every --snapshot-every entries, and the log before it goes: the disk and a
    // restarting member's replay stay bounded by the registry's size, not its history.
    RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
    RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, config.snapshotEvery());
    RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
    RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
    RaftServerConfigKeys.Log.setPurgeGap(p, (int) Math.min(config.snapshotEvery(), 1024));
    RaftClientConfigKeys.Rpc.setRequestTimeout(p, TimeDuration.valueOf(3, TimeUnit.SECONDS));
    // Elections for a machine that pauses (decision 87): a follower waits 0.7-1.4 s without hearing
    // from its leader before it stands (the leader's heartbeats go every half of the minimum), and
    // asks for pre-votes first, so that a member that was itself paused does not depose a leader
    // the others still hear.
    RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(ServerConfig.ELECTION_TIMEOUT_MIN.toMillis(),
        TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(ServerConfig.ELECTION_TIMEOUT_MAX.toMillis(),
        TimeUnit.MILLISECONDS));
    RaftServerConfigKeys.LeaderElection.setPreVote(p, true);
    return p;
  }
}
