package io.roster.server;

import io.roster.server.metrics.HistogramPriming;
import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.nacos.NacosEndpoint;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.Registry;
import io.roster.server.rpc.GrpcEndpoint;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.time.Stopwatch;
import io.roster.server.time.SystemScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Before the port opens, serves one request of each kind to scratch sessions, so that a fresh
 * server's first client does not pay for loading and linking the request paths: the first
 * registration after a start reached its subscriber's stream tens of milliseconds later than the
 * next ones, and most of that was the server's first use of the code (docs/benchmarks.md, "First
 * request").
 *
 * <p>Everything it touches is its own: a scratch registry, push engine, session manager and
 * scheduler, closed when it is done. The real registry, a cluster's log, the sessions and the
 * logs never hear of it. It drives the same code a client's requests do, from the session down:
 * subscribe (with and without deltas), register, the pushes (encoded for the Roster and the Nacos
 * wire formats) and their acks, a batch, an ADS stream's listener, cluster and assignment and the
 * assignment a deregistration pushes ({@link GrpcEndpoint#primeXds}), and the end of an owner;
 * each protocol adapter adds the decoding and mapping of its own frames ({@link
 * GrpcEndpoint#prime()}, {@link NacosEndpoint#prime()}, which covers a Nacos connection's server
 * check, setup and acks too), and the metrics their first histogram observation ({@link
 * HistogramPriming}), which a fresh server's first acked push paid for otherwise. The training
 * run of the class-data archive ({@code --exit-when-ready}) goes through it too, so the archive
 * holds these classes. Nothing here can fail the start: a
 * failure is logged and the server starts as it would have.
 */
final class Primer {

  private static final Logger log = LoggerFactory.getLogger(Primer.class);
  /** How long it waits for a push it caused; they come within milliseconds. */
  private static final Duration WAIT = Duration.ofSeconds(2);

  private Primer() {}

  /**
   * Primes this JVM on a thread of its own; completes with how long it took (also when it
   * failed: the server starts either way).
   */
  static CompletableFuture<Duration> startPriming() {
    CompletableFuture<Duration> done = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      Stopwatch took = Stopwatch.start();
      try {
        prime();
      } finally {
        done.complete(took.elapsed());
      }
    }, "roster-primer");
    t.setDaemon(true);
    t.start();
    return done;
  }

  /** Primes this JVM; a failure is logged, never thrown. */
  static void prime() {
    try {
      List<String> primed = run();
      log.debug("Primed: {}", primed);
    } catch (Exception | LinkageError | AssertionError e) {
      log.warn("Priming the request paths failed (the first requests will be slower): {}", e.toString());
      log.debug("Priming failed", e);
    }
  }

  /**
   * Primes this JVM; throws when a step did not do what a client would have seen.
   *
   * @return what it primed, a line per step: each adapter's messages ({@code "nacos:
   *     InstanceRequest"}, ...), the metrics' first observation, and the ADS exchange
   */
  static List<String> run() throws Exception {
    SystemScheduler scheduler = new SystemScheduler("roster-primer", 1);
    try {
      GrpcEndpoint.prime();
      List<String> primed = new java.util.ArrayList<>();
      primed.add("roster frames");
      NacosEndpoint.prime().forEach(type -> primed.add("nacos: " + type));
      primed.add(HistogramPriming.run());
      primed.add(sessions(scheduler));
      return primed;
    } finally {
      scheduler.close();
    }
  }

  /** The steps from the session down, and an xDS exchange on the same registry; returns what xDS saw. */
  private static String sessions(SystemScheduler scheduler) throws Exception {
    Registry registry = new Registry(() -> scheduler.currentTimeMillis() * 1000);
    registry.recordDepartures(true);
    PushEngine engine = new PushEngine(registry, scheduler, Duration.ZERO);
    registry.addListener(engine);
    SessionManager sessions = new SessionManager(registry, engine, scheduler, Duration.ofSeconds(3),
        SessionLimits.of(100, 100));
    sessions.nodeId("roster-primer");
    ServiceKey key = ServiceKey.of("public", "DEFAULT_GROUP", "roster-primer");
    Pushes rosterPushes = new Pushes();
    Pushes nacosPushes = new Pushes();
    Session subscriber = open(sessions, "subscriber", rosterPushes, true, Owner.Kind.SESSION);
    Session nacosSubscriber = open(sessions, "nacos-subscriber", nacosPushes, false, Owner.Kind.NACOS);
    Session provider = open(sessions, "provider", new Pushes(), false, Owner.Kind.SESSION);
    subscriber.subscribe(key, Set.of(), () -> { });
    nacosSubscriber.subscribe(key, Set.of("DEFAULT"), () -> { });
    rosterPushes.ack(subscriber);
    nacosPushes.ack(nacosSubscriber);

    Instance a = new Instance("127.0.0.1", 1, 1, true, true, true, "", Map.of("k", "v"), "");
    Instance b = new Instance("127.0.0.1", 2, 1, true, true, true, "", Map.of(), "");
    Instance c = new Instance("127.0.0.1", 3, 1, true, true, true, "", Map.of(), "");
    provider.register(key, a).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    rosterPushes.ack(subscriber);
    nacosPushes.ack(nacosSubscriber);
    provider.batchRegister(key, List.of(a, b, c)).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    rosterPushes.ack(subscriber);
    nacosPushes.ack(nacosSubscriber);
    String xds = GrpcEndpoint.primeXds(registry, scheduler, key,
        () -> provider.deregister(key, a.key()).get(WAIT.toMillis(), TimeUnit.MILLISECONDS));
    rosterPushes.ack(subscriber); // a delta against the acked state
    nacosPushes.ack(nacosSubscriber);
    sessions.close(provider);
    rosterPushes.ack(subscriber);
    sessions.close(subscriber);
    sessions.close(nacosSubscriber);
    engine.stop();
    return xds;
  }

  private static Session open(SessionManager sessions, String id, Pushes pushes, boolean deltas, Owner.Kind kind) {
    SessionInfo info = new SessionInfo("roster-primer-" + id, id, "public", "roster-primer", RosterServer.VERSION,
        Map.of(), "127.0.0.1", 0);
    return sessions.open(info, pushes, sessions.openConnection("127.0.0.1"), deltas, kind);
  }

  /** A session's outbound: encodes each push in both wire formats, and hands it to the primer. */
  private static final class Pushes implements Outbound {
    private final BlockingQueue<PushPayload> sent = new ArrayBlockingQueue<>(16);

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public int send(PushPayload payload) {
      GrpcEndpoint.primePush(payload);
      NacosEndpoint.primePush(payload);
      sent.offer(payload); // one more than the primer waits for is one it does not need
      return 0;
    }

    /** Waits for the next push and acks it, as a client would. */
    void ack(Session session) throws InterruptedException {
      PushPayload p = sent.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (p == null) {
        throw new IllegalStateException("no push within " + WAIT);
      }
      session.ack(p.pushId());
    }
  }
}
