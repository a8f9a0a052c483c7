package io.roster.server;

import io.roster.server.cluster.ClusterNode;
import io.roster.server.model.Owner;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.WarmUp;
import io.roster.server.rpc.GrpcEndpoint;
import io.roster.server.session.SessionManager;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a cluster member asks of the server around it: caught up, serving or not, writable or
 * not (and then its sessions asked to move), owners the log ended, sessions shed for balance.
 * The member is built before the server's sessions, warm-up and endpoint, so it reaches them
 * through suppliers, read only when the member calls (on its watch thread, after the start).
 */
final class MemberCallbacks implements ClusterNode.Local {

  private static final Logger log = LoggerFactory.getLogger(RosterServer.class);

  private final Supplier<WarmUp> warmUp;
  private final Readiness readiness;
  private final CompletableFuture<Void> firstWritable;
  private final Supplier<GrpcEndpoint> endpoint;
  private final Supplier<SessionManager> sessions;
  private final Duration balanceSettle;

  MemberCallbacks(Supplier<WarmUp> warmUp, Readiness readiness, CompletableFuture<Void> firstWritable,
      Supplier<GrpcEndpoint> endpoint, Supplier<SessionManager> sessions, Duration balanceSettle) {
    this.warmUp = warmUp;
    this.readiness = readiness;
    this.firstWritable = firstWritable;
    this.endpoint = endpoint;
    this.sessions = sessions;
    this.balanceSettle = balanceSettle;
  }

  @Override
  public void caughtUp() {
    // Caught up: this member's state is the cluster's (decision 20); it serves once the
    // cluster's watch says so (serving).
    warmUp.get().warmUpDone();
  }

  @Override
  public void serving(@Nullable String reason) {
    readiness.serving(reason);
  }

  @Override
  public void writable(@Nullable String reason, Supplier<String> suggest) {
    readiness.writable(reason);
    if (reason == null) {
      firstWritable.complete(null);
    }
    if (reason != null) {
      int asked = endpoint.get().moveSessions(reason, s -> true, suggest);
      log.info("Asked {} sessions to move to other members", asked);
    }
  }

  @Override
  public void ownersEnded(List<Owner> owners, Supplier<String> suggest) {
    Set<Owner> ended = new HashSet<>(owners);
    endpoint.get().moveSessions("the cluster ended this session's registrations while this member was cut off; "
        + "reconnect and register again", s -> ended.contains(s.owner()), suggest);
  }

  @Override
  public int sessionCount() {
    return sessions.get().count();
  }

  @Override
  public int shed(int count, String to) {
    return sessions.get().shed(count, balanceSettle, "balancing the cluster: please move to " + to, to);
  }
}
