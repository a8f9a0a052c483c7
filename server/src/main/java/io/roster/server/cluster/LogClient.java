package io.roster.server.cluster;

import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.exceptions.ReconfigurationInProgressException;
import org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException;
import org.apache.ratis.protocol.exceptions.SetConfigurationException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A member's client of the log: it sends entries to whichever member leads, retrying across
 * leader changes, and replaces its Ratis client when that one is stuck.
 */
final class LogClient implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(LogClient.class);
  /** How often an entry is sent again while no leader takes it (decision 55). */
  static final Duration RETRY_EVERY = Duration.ofMillis(20);
  /** How long an entry is retried in all before it fails. */
  static final Duration RETRY_FOR = Duration.ofSeconds(4);
  /** A Ratis client with nothing committed for this long, and failing, is replaced. */
  static final Duration RENEW_CLIENT_AFTER = Duration.ofSeconds(5);

  private final String memberId;
  private final RaftProperties props;
  /** This member's peer TLS (PeerTls), the same as its Raft server's. */
  private final Parameters parameters;
  /** The group as it stands now: a new client (see {@link #renewIfStuck}) gets its current members. */
  private final java.util.function.Supplier<RaftGroup> group;
  private final Scheduler timer;
  /** Replaced when it is stuck (see {@link #renewIfStuck}). */
  private volatile RaftClient client;
  /** When an entry sent was last committed (or the client last renewed). */
  private volatile long sentOkNanos;
  private final AtomicBoolean renewing = new AtomicBoolean();
  private volatile boolean closed;

  LogClient(String memberId, RaftProperties props, Parameters parameters, java.util.function.Supplier<RaftGroup> group,
      Scheduler timer) {
    this.memberId = memberId;
    this.props = props;
    this.parameters = parameters;
    this.group = group;
    this.timer = timer;
    this.sentOkNanos = timer.nanoTime();
    this.client = newClient();
  }

  /** A Ratis client of the group, retrying each entry every {@link #RETRY_EVERY} for {@link #RETRY_FOR}. */
  private RaftClient newClient() {
    return newClient(props);
  }

  private RaftClient newClient(RaftProperties properties) {
    return newClient(properties, RetryPolicies.retryUpToMaximumCountWithFixedSleep(
        (int) (RETRY_FOR.toMillis() / RETRY_EVERY.toMillis()), TimeDuration.valueOf(RETRY_EVERY.toMillis(),
            TimeUnit.MILLISECONDS)));
  }

  private RaftClient newClient(RaftProperties properties, RetryPolicy retry) {
    ClientId id = ClientId.randomId();
    return RaftClient.newBuilder()
        .setProperties(properties)
        .setRaftGroup(group.get())
        .setClientId(id)
        .setRetryPolicy(retry)
        .setClientRpc(new GrpcFactory(parameters).newRaftClientRpc(id, properties))
        .build();
  }

  /** Sends one entry; completes with the reply once it is committed, exceptionally if it failed. */
  CompletableFuture<?> send(byte[] entry) {
    RaftClient c = client;
    return c.async().send(Message.valueOf(ByteString.copyFrom(entry))).handle((reply, error) -> {
      Throwable failed = error != null ? error : reply.isSuccess() ? null : reply.getException();
      if (failed == null) {
        sentOkNanos = timer.nanoTime();
        return reply;
      }
      renewIfStuck(c, failed);
      throw failed instanceof CompletionException ce ? ce : new CompletionException(failed);
    });
  }

  /**
   * Replaces the Ratis client when {@code failed}, the current one, has had no entry committed
   * for {@link #RENEW_CLIENT_AFTER}. Ratis's ordered client can stay on a leader that was killed
   * and restarted: every entry is answered "not the leader, suggested leader: (the dead one)"
   * while the other members commit (decision 34). A new client finds the leader afresh; entries
   * the old one still holds fail, and their requests with them (UNAVAILABLE: the SDK moves or
   * retries; an owner's end is proposed again).
   */
  private void renewIfStuck(RaftClient failed, Throwable why) {
    if (closed || client != failed || timer.nanoTime() - sentOkNanos < RENEW_CLIENT_AFTER.toNanos()
        || !renewing.compareAndSet(false, true)) {
      return;
    }
    try {
      client = newClient();
      sentOkNanos = timer.nanoTime();
      log.warn("Cluster member {}: the log client committed nothing for {} ms (last: {}); using a new one", memberId,
          RENEW_CLIENT_AFTER.toMillis(), why.toString());
      timer.execute(() -> {
        try {
          failed.close();
        } catch (IOException | RuntimeException e) {
          log.debug("Closing the replaced log client", e);
        }
      });
    } finally {
      renewing.set(false);
    }
  }

  /** How soon a change of members is asked again when the group had no leader to take it. */
  static final Duration CHANGE_RETRY_EVERY = Duration.ofMillis(100);

  /**
   * Asks the group's leader to change its members to {@code peers}, for at most {@code timeout}:
   * asked again every {@link #CHANGE_RETRY_EVERY} while no leader takes it, never once the group
   * has answered that the change failed (a member added that makes no progress, another change in
   * progress): such a failure is final, and the group's configuration is as it was.
   */
  RaftClientReply setConfiguration(List<org.apache.ratis.protocol.RaftPeer> peers, Duration timeout)
      throws IOException {
    // A client of the current group, so that the leader is found among today's members, that waits
    // for a new member to catch up before the change commits.
    RaftProperties p = new RaftProperties(props);
    org.apache.ratis.client.RaftClientConfigKeys.Rpc.setRequestTimeout(p,
        TimeDuration.valueOf(timeout.toMillis(), TimeUnit.MILLISECONDS));
    long deadline = timer.nanoTime() + timeout.toNanos();
    RetryPolicy untilRefusedOrLate = event -> {
      Throwable cause = event.getCause();
      boolean refused = cause instanceof ReconfigurationTimeoutException
          || cause instanceof ReconfigurationInProgressException || cause instanceof SetConfigurationException;
      return refused || timer.nanoTime() - deadline + CHANGE_RETRY_EVERY.toNanos() > 0 ? RetryPolicy.NO_RETRY_ACTION
          : () -> TimeDuration.valueOf(CHANGE_RETRY_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    };
    try (RaftClient c = newClient(p, untilRefusedOrLate)) {
      return c.admin().setConfiguration(peers);
    }
  }

  /** Asks the group to make {@code member} its leader, waiting at most {@code timeout}. */
  RaftClientReply transferLeadership(String member, Duration timeout) throws IOException {
    return client.admin().transferLeadership(Peer.peerId(member), timeout.toMillis());
  }

  @Override
  public void close() {
    closed = true;
    try {
      client.close();
    } catch (IOException e) {
      log.debug("Closing the log client", e);
    }
  }
}
