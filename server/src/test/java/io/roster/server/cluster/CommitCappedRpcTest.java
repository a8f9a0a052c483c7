package io.roster.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.TermIndexProto;
import org.junit.jupiter.api.Test;

class CommitCappedRpcTest {

  private static AppendEntriesRequestProto.Builder request(long leaderCommit, long... indexes) {
    AppendEntriesRequestProto.Builder b = AppendEntriesRequestProto.newBuilder().setLeaderTerm(3)
        .setLeaderCommit(leaderCommit);
    for (long i : indexes) {
      b.addEntries(LogEntryProto.newBuilder().setTerm(3).setIndex(i));
    }
    return b;
  }

  /**
   * A follower commits min(leaderCommit, previous + entries) with a missing previous counted as
   * index 0 (Ratis 3.2, ServerImplUtils.effectiveCommitIndex): what it would commit on this request.
   */
  private static long followerCommits(AppendEntriesRequestProto r) {
    long previous = r.hasPreviousLog() ? r.getPreviousLog().getIndex() : 0;
    return Math.min(r.getLeaderCommit(), previous + r.getEntriesCount());
  }

  @Test
  void aHeartbeatWithoutAPreviousEntryCommitsNothing() {
    AppendEntriesRequestProto heartbeat = request(0).build();
    assertThat(followerCommits(heartbeat)).as("uncapped: the follower commits whatever it holds at index 0").isZero();

    AppendEntriesRequestProto capped = CommitCappedRpc.capCommit(heartbeat);

    assertThat(capped.getLeaderCommit()).isEqualTo(-1);
    assertThat(followerCommits(capped)).isEqualTo(-1);
  }

  @Test
  void entriesWithoutAPreviousEntryCommitNoFurtherThanTheLastOneCarried() {
    AppendEntriesRequestProto fromZero = request(7, 0, 1, 2).build();
    assertThat(followerCommits(fromZero)).as("uncapped: one past the entries sent").isEqualTo(3);

    AppendEntriesRequestProto capped = CommitCappedRpc.capCommit(fromZero);

    assertThat(capped.getLeaderCommit()).isEqualTo(2);
    assertThat(capped.getEntriesList()).isEqualTo(fromZero.getEntriesList());
  }

  @Test
  void requestsThatAreAlreadyBoundedAreLeftAlone() {
    AppendEntriesRequestProto withPrevious = request(9)
        .setPreviousLog(TermIndexProto.newBuilder().setTerm(3).setIndex(4)).build();
    AppendEntriesRequestProto lowCommit = request(1, 0, 1, 2).build();

    assertThat(CommitCappedRpc.capCommit(withPrevious)).isSameAs(withPrevious);
    assertThat(CommitCappedRpc.capCommit(lowCommit)).isSameAs(lowCommit);
    assertThat(CommitCappedRpc.capCommit(null)).isNull();
  }

  @Test
  void ratisFindsTheTypeAgainByItsName() {
    RaftProperties p = new RaftProperties();
    RaftConfigKeys.Rpc.setType(p, new CommitCappedRpc());

    assertThat(RaftConfigKeys.Rpc.type(p, s -> { })).isInstanceOf(CommitCappedRpc.class);
  }
}
