package io.roster.client.internal;

import io.roster.client.Instance;
import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import io.roster.client.ServicePage;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One-off reads: the instances of a service (from the {@link SubscriptionCache} when
 * subscribed, else a query frame on the active session, else {@code Registry/QueryInstances}
 * on the servers in turn, else the failover snapshot), the selections made from them, the
 * services of the namespace, and the queries of the {@link Poller}.
 *
 * <p>Threading: thread-safe and stateless apart from its collaborators; it takes no lock
 * (reading the cache is a short task of the client's {@link SerialContext}). The query methods
 * block the caller for up to the request timeout and must not be called from a transport
 * thread or a task; {@link #poll} does not block and runs in the context.
 */
final class Queries {

  private static final Logger log = LoggerFactory.getLogger(DefaultRosterClient.class);

  private final ConnectionManager connection;
  private final RegistryCalls calls;
  private final SubscriptionCache cache;
  private final @Nullable FailoverStore failover;
  private final String namespace;
  private final Duration requestTimeout;
  private final Random random;
  private final Runnable ensureOpen;

  /**
   * @param failover the failover store, or null when disabled
   * @param ensureOpen throws {@link io.roster.client.ClientClosedException} once the client is closed
   */
  Queries(ConnectionManager connection, RegistryCalls calls, SubscriptionCache cache,
      @Nullable FailoverStore failover, String namespace, Duration requestTimeout, Random random,
      Runnable ensureOpen) {
    this.connection = connection;
    this.calls = calls;
    this.cache = cache;
    this.failover = failover;
    this.namespace = namespace;
    this.requestTimeout = requestTimeout;
    this.random = random;
    this.ensureOpen = ensureOpen;
  }

  List<Instance> allInstances(ServiceKey key) {
    return current(key).instances();
  }

  List<Instance> select(ServiceKey key, @Nullable List<String> clusters, boolean healthy) {
    ServiceSnapshot s = current(key);
    return Balancer.select(Balancer.inClusters(s.instances(), clusters), healthy, s.protectThresholdReached());
  }

  Instance selectOneHealthy(ServiceKey key, @Nullable List<String> clusters) {
    ServiceSnapshot s = current(key);
    List<Instance> all = Balancer.inClusters(s.instances(), clusters);
    String where = clusters == null || clusters.isEmpty() ? "" : " clusters " + clusters + " of";
    return Balancer.pickWeighted(all, random, s.protectThresholdReached()).orElseThrow(() -> new RosterException(
        Code.NO_INSTANCE_AVAILABLE,
        "no healthy, enabled instance with weight > 0 in" + where + " " + key
            + " (" + all.size() + " instance(s) in total)"));
  }

  /** One page of the services of the namespace in {@code group} (arguments checked by the caller). */
  ServicePage servicesOfServer(int pageNo, int pageSize, @Nullable String group) {
    return unary("list the services of " + namespace, Deadline.after(requestTimeout),
        (address, timeout) -> calls.listServices(address, namespace, group, pageNo, pageSize, timeout));
  }

  /**
   * A poll of the {@link Poller}: {@code Registry/QueryInstances} on the preferred server with
   * the known checksum. Does not block.
   */
  CompletableFuture<QueryAnswer> poll(ServiceKey key, String knownChecksum) {
    return calls.queryInstances(connection.addressesInPreferredOrder().get(0), key, knownChecksum, requestTimeout);
  }

  /**
   * The state consumers work from: the cache when subscribed, else a query, else (no server
   * answered) the failover snapshot. An unknown service is an empty state.
   */
  private ServiceSnapshot current(ServiceKey key) {
    ServiceSnapshot cached = cache.snapshot(key);
    if (cached != null) {
      return cached;
    }
    String what = "query the instances of " + key;
    Deadline deadline = Deadline.after(requestTimeout);
    try {
      ServiceSnapshot answer = queryOnSession(key, what, deadline);
      if (answer == null) {
        answer = unary(what, deadline, (address, timeout) -> calls.queryInstances(address, key, "", timeout))
            .snapshot();
      }
      return answer;
    } catch (RosterException e) {
      if (e.code() == Code.NOT_FOUND) {
        return new ServiceSnapshot(key, List.of(), 0, "");
      }
      ServiceSnapshot saved = failover == null || (e.code() != Code.UNAVAILABLE && e.code() != Code.TIMEOUT)
          ? null : failover.load(key);
      if (saved != null) {
        log.debug("No Roster server answered; {} from the failover snapshot", key);
        return saved;
      }
      throw e;
    }
  }

  /**
   * The query as a frame on the active session, which costs the server and this client far less
   * than a call of its own (no new HTTP/2 stream, headers or deadline timer). Returns null to use
   * {@code Registry/QueryInstances} instead: no active session, a server that does not answer
   * queries on the stream, a stopping server, or a session that ended before answering.
   */
  private @Nullable ServiceSnapshot queryOnSession(ServiceKey key, String what, Deadline deadline) {
    Session session = connection.activeSession();
    if (session == null || !session.supports(Session.FEATURE_QUERY)) {
      return null;
    }
    Duration wait = deadline.remaining();
    Answer result = Requests.awaitAnswer(session.request(new Request.Query(key), wait), wait, what,
        () -> new RosterException(Code.TIMEOUT, "cannot " + what + ": no answer from " + session.address
            + " within " + requestTimeout.toMillis() + " ms"));
    if (result == null || result.unavailable()) {
      return null;
    }
    if (!result.ok()) {
      throw result.toException();
    }
    return result.query() == null ? new ServiceSnapshot(key, List.of(), 0, "") : result.query().snapshot();
  }

  /** A one-off Registry call, trying the servers in order until {@code deadline}. */
  private <T> T unary(String what, Deadline deadline,
      BiFunction<ServerAddress, Duration, CompletableFuture<T>> call) {
    RosterException last = null;
    for (ServerAddress address : connection.addressesInPreferredOrder()) {
      Duration left = deadline.remaining();
      if (left.isZero()) {
        break;
      }
      ensureOpen.run();
      try {
        return call.apply(address, left).get(left.toNanos(), TimeUnit.NANOSECONDS);
      } catch (ExecutionException e) {
        ensureOpen.run();
        RosterException re = ProtoMapper.toException(e.getCause(), what);
        if (re.code() != Code.UNAVAILABLE) {
          throw re;
        }
        last = re;
        log.debug("Cannot {} on {}: {}", what, address, re.getMessage());
      } catch (TimeoutException e) {
        break;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RosterException(Code.UNAVAILABLE, "interrupted while waiting to " + what);
      }
    }
    ensureOpen.run();
    if (last != null) {
      throw new RosterException(Code.UNAVAILABLE, "cannot " + what + ": no Roster server of "
          + connection.addresses() + " answered (" + last.getMessage() + ")", "", last);
    }
    throw new RosterException(Code.TIMEOUT, "cannot " + what + ": no answer within "
        + requestTimeout.toMillis() + " ms");
  }
}
