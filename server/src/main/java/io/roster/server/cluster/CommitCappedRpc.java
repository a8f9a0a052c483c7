package io.roster.server.cluster;

import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;
import org.apache.ratis.server.raftlog.RaftLogIOException;

/**
 * Ratis's gRPC transport with one fix: an append-entries request that names no previous entry
 * never tells the follower to commit past the entries it carries (decision 44).
 *
 * <p>Ratis 3.2 bounds the commit index it sends by {@code previous + entries}, taking a missing
 * previous entry as index 0 where it means "before index 0" (-1). A heartbeat to a follower whose
 * next index has fallen back to 0 therefore says "commit index 0" although it checked nothing:
 * a follower that still holds an index-0 entry of an earlier term (a first leader that lost its
 * lead before that entry was replicated) commits and applies it. From then on it refuses the
 * leader's own index 0 as already committed and the leader's index 1 as not following anything
 * it has, and the two trade {@code INCONSISTENCY} replies forever: the member never catches up.
 * It happens to fresh 3-member clusters on a starved CPU, with Ratis 3.2.0 and 3.2.2 alike.
 *
 * <p>Selected by {@code RaftConfigKeys.Rpc.setType(properties, new CommitCappedRpc())}; Ratis
 * finds the type again by its class name, so this class needs its public no-argument constructor.
 */
public final class CommitCappedRpc implements RpcType {

  @Override
  public String name() {
    return CommitCappedRpc.class.getName();
  }

  @Override
  public RpcFactory newFactory(Parameters parameters) {
    return new Factory(parameters);
  }

  /**
   * The commit index a leader may send with this request: what Ratis computed, but no further
   * than the last entry it carries when it names no previous entry (-1 for a heartbeat then).
   */
  static AppendEntriesRequestProto capCommit(AppendEntriesRequestProto request) {
    if (request == null || request.hasPreviousLog()) {
      return request;
    }
    int n = request.getEntriesCount();
    long bound = n == 0 ? -1 : request.getEntries(n - 1).getIndex();
    return request.getLeaderCommit() <= bound ? request : request.toBuilder().setLeaderCommit(bound).build();
  }

  private static final class Factory extends GrpcFactory {
    Factory(Parameters parameters) {
      super(parameters);
    }

    @Override
    public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
      return new Appender(server, state, follower);
    }
  }

  private static final class Appender extends GrpcLogAppender {
    Appender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
      super(server, state, follower);
    }

    @Override
    public AppendEntriesRequestProto newAppendEntriesRequest(long callId, boolean heartbeat)
        throws RaftLogIOException {
      return capCommit(super.newAppendEntriesRequest(callId, heartbeat));
    }
  }
}
