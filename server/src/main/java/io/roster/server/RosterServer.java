package io.roster.server;

import io.roster.server.auth.Audit;
import io.roster.server.auth.Authenticator;
import io.roster.server.admin.RosterAdminApi;
import io.roster.server.cluster.ClusterNode;
import io.roster.server.cluster.EntryClock;
import io.roster.server.config.ServerConfig;
import io.roster.server.dns.DnsAnswers;
import io.roster.server.dns.DnsServer;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.metrics.MetricsApi;
import io.roster.server.metrics.ServerMetrics;
import io.roster.server.model.Owner;
import io.roster.server.nacos.NacosEndpoint;
import io.roster.server.nacos.NacosAdminApi;
import io.roster.server.nacos.NacosHttpApi;
import io.roster.server.naming.Leases;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.WarmUp;
import io.roster.server.registry.ServiceLimits;
import io.roster.server.registry.Writer;
import io.roster.server.store.DataDir;
import io.roster.server.store.DurableWriter;
import io.roster.server.store.StateStore;
import io.roster.server.rpc.GrpcEndpoint;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.probe.HealthProbes;
import io.roster.server.store.Backup;
import io.roster.server.probe.ProbeClient;
import io.roster.server.time.Scheduler;
import io.roster.server.time.SystemScheduler;
import io.roster.server.tls.ServerTls;
import io.roster.server.tls.TlsFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A standalone Roster server: registry, push pipeline, sessions and the gRPC endpoint, wired
 * and started. Embeddable (tests use it on port 0):
 *
 * <pre>{@code
 * try (RosterServer server = RosterServer.start(ServerConfig.builder().port(0).build())) {
 *   int port = server.port();
 * }
 * }</pre>
 *
 * <p>The scheduler (push fan-out, ack timers, warm-up, keepalive rules) and the wall clock the
 * registry's revisions come from may be given from outside ({@link #start(ServerConfig,
 * Scheduler, LongSupplier)}), so that tests can run one or several servers on one fake clock;
 * {@link #start(ServerConfig)} uses a system scheduler of its own and the system clock.
 *
 * <p>{@link #close()} is graceful and idempotent: NOT_SERVING, {@code reconnect} to every
 * session, then stop within the configured grace period.
 */
public final class RosterServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RosterServer.class);
  static final String VERSION = "0.1.0";

  private final ServerConfig config;
  private final Scheduler scheduler;
  /** The scheduler when this server created it (and so closes it), else null. */
  private final @Nullable SystemScheduler ownScheduler;
  private final Registry registry;
  private final SessionManager sessions;
  /** Who every port's callers are: off unless --auth-file is given (docs/security.md). */
  private final Authenticator authenticator;
  private final GrpcEndpoint endpoint;
  private final PushEngine engine;
  private final WarmUp warmUp;
  /**
   * Whether it serves now, and why not: the one answer every port asks (decision 86). A cluster
   * member serves once it is in the group and has caught up with the log.
   */
  private final Readiness readiness;
  /** This server as a cluster member, or null when standalone. */
  private final @Nullable ClusterNode cluster;
  /** {@code --data-dir}, locked for this process; null when it is "" (nothing on disk). */
  private final @Nullable DataDir dataDir;
  /** Probes of persistent instances at most in flight at once; more are skipped, not queued. */
  private static final int MAX_PROBES_IN_FLIGHT = 2048;
  private final ProbeClient probeClient;
  private final HealthProbes probes;
  /** Where changes go: the cluster's log, the standalone journal, or the registry directly. */
  private final Writer writer;
  /** Completes when this cluster member first takes writes (a restore waits for it). */
  private final CompletableFuture<Void> firstWritable = new CompletableFuture<>();
  /** {@code --restore}'s backup, read and checked at start; null without one. */
  private final io.roster.proto.cluster.v1.@Nullable Backup backup;
  /** How long a restore waits for one change to be applied. */
  private static final Duration RESTORE_TIMEOUT = Duration.ofSeconds(60);
  /** A standalone server's writer of durable state; null in a cluster or without a data directory. */
  private @Nullable DurableWriter durable;
  /** Heartbeat instances of the Nacos v1 HTTP API held by this server. */
  private final Leases leases;
  private final NacosHttpApi nacosHttp;
  /** The Nacos v1 HTTP listener, or null when {@code --http-port off}. */
  private final @Nullable HttpEndpoint http;
  /** The DNS port, or null when {@code --dns-port off} (the default). */
  private volatile @Nullable DnsServer dns;
  /** What GET /metrics reports. */
  private final ServerMetrics metrics;
  /** The TLS material of the client and HTTP ports, or null when they speak plaintext. */
  private final @Nullable ServerTls tls;
  private final CountDownLatch terminated = new CountDownLatch(1);
  private boolean closed;

  private RosterServer(ServerConfig config, Scheduler scheduler, @Nullable SystemScheduler ownScheduler,
      LongSupplier wallClockMicros) {
    this.config = config;
    this.scheduler = scheduler;
    this.ownScheduler = ownScheduler;
    // First: bad TLS files stop the start before anything else is built.
    TlsFiles tlsFiles = config.tls();
    this.tls = tlsFiles == null ? null : ServerTls.load(tlsFiles);
    // A member's revisions come from the log's entries, the same on every member (docs/cluster.md).
    EntryClock entryClock = config.clustered() ? ClusterNode.entryClock() : null;
    this.registry = new Registry(entryClock != null ? entryClock : wallClockMicros, config.maxServiceSettingsBytes(),
        new ServiceLimits(config.maxInstancesPerService(), config.maxServiceBytes()));
    this.engine = new PushEngine(registry, scheduler, config.pushWindow());
    registry.addListener(engine);
    String incarnation = Long.toString(wallClockMicros.getAsLong() / 1000, 36);
    // The backup before the data directory: a bad one stops the start with the directory untouched.
    this.backup = readBackup(config);
    this.dataDir = openDataDir(config);
    this.readiness = entryClock == null ? Readiness.ready() : Readiness.notYet(ClusterNode.CATCHING_UP);
    this.cluster = entryClock == null ? null
        : ClusterNode.start(config, registry, entryClock, new Local(), wallClockMicros, incarnation);
    Writer writer;
    if (cluster != null) {
      writer = cluster.writer();
    } else if (dataDir != null) {
      // Durable state is read back before anything is served.
      durable = openStandalone(dataDir, registry);
      writer = durable;
    } else {
      writer = Writer.direct(registry);
    }
    this.writer = writer;
    this.sessions = new SessionManager(registry, writer, engine, scheduler, config.pushAckTimeout(),
        new SessionLimits(config.maxInstancesPerConnection(), config.maxSubscriptionsPerConnection(),
            config.maxSessionsPerConnection(), config.maxWatchesPerConnection(), config.maxSessionsPerAddress(),
            config.maxInstancesPerAddress()));
    this.authenticator = config.authFile() == null ? Authenticator.off()
        : Authenticator.open(config.authFile(), config.tokenTtl(), scheduler);
    sessions.authenticator(authenticator);
    sessions.probePolicy(config.probeAllow());
    // Every check of the auth file: sessions get their identities' current grants, or end.
    authenticator.onCheck(sessions::revalidate);
    authenticator.onCheck(Audit::flush); // refusal windows that ended are written within a check of the file
    String boot = Long.toString(registry.bootRevision(), 36);
    // A fresh process: the clients of the previous one are still coming back (decision 20).
    // Its window runs from the port's opening (start), when the clients come back, and ends
    // early once they are back: no session opened and nothing registered for a quiet period
    // (decision 88).
    this.warmUp = WarmUp.pending(scheduler, config.warmUp(), config.warmUpQuiet());
    sessions.onOpen(warmUp::arrived);
    Registry.ChangeListener arrivals = change -> warmUp.arrived();
    registry.addListener(arrivals);
    warmUp.onWarm(() -> registry.removeListener(arrivals));
    // While it warms up, states list the departures this process saw, so that clients hold
    // only what it never had (decision 20); once warm, its states are whole.
    registry.recordDepartures(true);
    warmUp.onWarm(() -> registry.recordDepartures(false));
    DurableWriter d = durable;
    if (d != null) {
      // Holds read back whose instances did not return within the warm-up end as if they had left.
      warmUp.onWarm(d::endRestored);
      if (warmUp.isWarm()) {
        d.endRestored(); // --warm-up 0s: no time to come back
      }
      scheduleFlush(d);
    }
    if (warmUp.isWarm()) {
      registry.recordDepartures(false);
    }
    NacosEndpoint nacos = new NacosEndpoint(sessions, registry, scheduler, config.keepaliveTime(),
        config.keepaliveTimeout(), readiness);
    this.endpoint = new GrpcEndpoint(config, registry, engine, sessions, scheduler,
        cluster != null ? port -> cluster.ownerNode() : port -> nodeHost(config.host()) + ":" + port + "@" + boot,
        VERSION, warmUp, cluster,
        List.of(new GrpcEndpoint.Guest(nacos.services(), nacos.transportFilter(), nacos, cluster != null)), tls,
        readiness);
    this.leases = new Leases(writer, registry, scheduler, sessions::nodeId, config.maxInstancesPerAddress());
    this.probeClient = new ProbeClient(config.probeTimeout(), MAX_PROBES_IN_FLIGHT, config.probeAllow());
    ClusterNode node = cluster;
    this.probes = new HealthProbes(registry, writer, probeClient, scheduler,
        node == null ? HealthProbes.Live::standalone : () -> new HealthProbes.Live(node.memberId(), node.liveMembers()),
        new HealthProbes.Timing(config.probeInterval(), config.probeThreshold()));
    this.nacosHttp = new NacosHttpApi(registry, writer, leases, sessions::count, authenticator, sessions::probePolicy,
        readiness);
    int httpPort = config.resolvedHttpPort();
    this.http = httpPort < 0 ? null : new HttpEndpoint(config.host(), httpPort,
        HttpEndpoint.Limits.DEFAULT.withRequestTimeout(config.httpRequestTimeout()), tls);
    this.metrics = new ServerMetrics(new ServerMetrics.Sources(VERSION, registry, sessions, engine, warmUp,
        authenticator, endpoint::openSessions, nacos::connectionCount, http == null ? () -> 0 : http::openConnections,
        cluster, wallClockMicros, probes::counts));
    if (dataDir != null) {
      try {
        metrics.dataDir(dataDir.path());
      } catch (IOException e) {
        log.warn("Cannot read the file system of {}: its size and free space are not in /metrics ({})", dataDir.path(),
            e.toString());
      }
    }
    if (http != null) {
      RequestCounters requests = sessions.requests();
      http.onAnswered((route, path, status, refusal) -> requests.count(route.startsWith("/nacos")
          ? RequestCounters.Protocol.NACOS_HTTP : RequestCounters.Protocol.HTTP, NACOS_PATHS.contains(path) ? path : route,
          httpResult(status), refusal));
      new MetricsApi(metrics, registry, new HttpCallers(authenticator), readiness).routeOn(http);
      nacosHttp.routeOn(http);
      new NacosAdminApi(registry, writer, engine, sessions, nacosHttp, readiness).routeOn(http);
      new RosterAdminApi(registry, sessions, cluster, () -> wallClockMicros.getAsLong() / 1000, readiness)
          .routeOn(http);
      // The console, and the URLs Nacos users open for theirs.
      http.staticFiles("/console", "console", List.of("index.html", "app.js", "style.css"));
      for (String nacosConsole : List.of("/nacos", "/nacos/", "/nacos/index.html")) {
        http.redirect(nacosConsole, "/console/");
      }
    }
  }

  private static io.roster.proto.cluster.v1.@Nullable Backup readBackup(ServerConfig config) {
    Path file = config.restore();
    if (file == null) {
      return null;
    }
    try {
      return Backup.read(file);
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /**
   * Restores {@code --restore}'s backup into a registry that holds no durable state yet
   * (standalone: before the port opens; a cluster member: once it has caught up, on a thread of
   * its own, through the log). One that holds some keeps it, with a WARN.
   */
  private void restore(io.roster.proto.cluster.v1.Backup b, Writer writer) {
    Path file = Objects.requireNonNull(config.restore());
    if (Backup.holdsDurableState(registry)) {
      log.warn("--restore {}: not applied: this {} already holds durable state (service settings or persistent "
          + "instances); a backup is restored only into an empty one", file, cluster == null ? "server" : "cluster");
      return;
    }
    try {
      Backup.Restored r = Backup.restore(b, writer, RESTORE_TIMEOUT.toMillis());
      log.info("Restored {} (taken {} from {}): {} service settings, {} persistent instances, {} holds{}", file,
          b.getTakenAt(), b.getSource(), r.settings(), r.persistent(), r.holds(), r.holdsWithoutInstance() == 0 ? ""
              : "; " + r.holdsWithoutInstance() + " holds of instances not registered now were dropped");
    } catch (IOException e) {
      log.error("--restore {}: stopped part way: {}. What was restored stays; restoring the same backup again "
          + "into an emptied data directory starts over", file, e.getMessage());
    }
  }

  private static @Nullable DataDir openDataDir(ServerConfig config) {
    if (config.dataDir() == null) {
      return null;
    }
    try {
      return DataDir.open(config.dataDir());
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
  }

  /** A standalone server's durable state, read back into {@code registry}; its writer. */
  private static DurableWriter openStandalone(DataDir dir, Registry registry) {
    StateStore store;
    try {
      store = StateStore.open(dir.standalone(), STATE_COMPACT_AFTER);
    } catch (IOException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    StateStore.State state = store.state();
    DurableWriter writer = new DurableWriter(registry, store);
    DurableWriter.load(registry, state);
    registry.onHoldEnded(writer);
    if (!state.settings().isEmpty() || !state.holds().isEmpty()) {
      log.info("Read back from {}: settings of {} services, {} operator holds", store, state.settings().size(),
          state.holds().size());
    }
    return writer;
  }

  /** Journal facts after which a standalone server rewrites its state file. */
  private static final int STATE_COMPACT_AFTER = 10_000;
  /** How often holds ended by departures are written down. */
  private static final Duration FLUSH_EVERY = Duration.ofSeconds(1);

  private void scheduleFlush(DurableWriter d) {
    scheduler.schedule(() -> {
      if (!isClosed()) {
        d.flush();
        scheduleFlush(d);
      }
    }, FLUSH_EVERY);
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  /**
   * The Nacos v1 naming API's endpoints, counted by path; every other HTTP request counts under
   * the route it was added with, so that no path a client makes up becomes a label.
   */
  private static final Set<String> NACOS_PATHS = Set.of("/nacos/v1/ns/instance", "/nacos/v1/ns/instance/list",
      "/nacos/v1/ns/instance/beat", "/nacos/v1/ns/service/list", "/nacos/v1/ns/operator/metrics",
      "/nacos/v1/ns/operator/log");

  /** The result label of an HTTP answer's status, as the gRPC ports' results read. */
  private static String httpResult(int status) {
    return switch (status) {
      case 400, 405, 414 -> "invalid_argument";
      case 401 -> "unauthenticated";
      case 403 -> "permission_denied";
      case 404 -> "not_found";
      case 409 -> "failed_precondition";
      case 413, 429 -> "resource_exhausted";
      case 503 -> "unavailable";
      default -> status < 400 ? RequestCounters.OK : status < 500 ? "invalid_argument" : "internal";
    };
  }

  /** What the cluster asks of this server. */
  private final class Local implements ClusterNode.Local {
    @Override
    public void caughtUp() {
      // Caught up: this member's state is the cluster's (decision 20); it serves once the
      // cluster's watch says so (serving).
      warmUp.warmUpDone();
    }

    @Override
    public void serving(@Nullable String reason) {
      readiness.serving(reason);
    }

    @Override
    public void writable(@Nullable String reason, java.util.function.Supplier<String> suggest) {
      readiness.writable(reason);
      if (reason == null) {
        firstWritable.complete(null);
      }
      if (reason != null) {
        int asked = endpoint.moveSessions(reason, s -> true, suggest);
        log.info("Asked {} sessions to move to other members", asked);
      }
    }

    @Override
    public void ownersEnded(List<Owner> owners, java.util.function.Supplier<String> suggest) {
      Set<Owner> ended = new HashSet<>(owners);
      endpoint.moveSessions("the cluster ended this session's registrations while this member was cut off; "
          + "reconnect and register again", s -> ended.contains(s.owner()), suggest);
    }

    @Override
    public int sessionCount() {
      return sessions.count();
    }

    @Override
    public int shed(int count, String to) {
      return sessions.shed(count, config.balanceSettle(), "balancing the cluster: please move to " + to, to);
    }
  }

  /**
   * Builds and starts a server with a scheduler of its own (closed with the server) and the
   * system clock; returns once the port is bound and health is SERVING.
   */
  public static RosterServer start(ServerConfig config) {
    return start(config, () -> { });
  }

  /**
   * Same, running {@code beforeListening} once the server is built and before its port opens
   * (the process's start waits there for its priming, which runs meanwhile).
   */
  static RosterServer start(ServerConfig config, Runnable beforeListening) {
    SystemScheduler own = new SystemScheduler("roster-push", 1);
    try {
      return start(config, own, own, SystemScheduler::wallClockMicros, beforeListening);
    } catch (RuntimeException e) {
      own.close();
      throw e;
    }
  }

  /**
   * Builds and starts a server on {@code scheduler} and {@code wallClockMicros} (microseconds
   * since the epoch, the source of the registry's revisions, decision 2); returns once the port
   * is bound and health is SERVING. The caller owns the scheduler: closing the server does not
   * close it.
   */
  public static RosterServer start(ServerConfig config, Scheduler scheduler, LongSupplier wallClockMicros) {
    return start(config, scheduler, null, wallClockMicros, () -> { });
  }

  private static RosterServer start(ServerConfig config, Scheduler scheduler, @Nullable SystemScheduler own,
      LongSupplier wallClockMicros, Runnable beforeListening) {
    RosterServer server = new RosterServer(Objects.requireNonNull(config), Objects.requireNonNull(scheduler), own,
        Objects.requireNonNull(wallClockMicros));
    beforeListening.run();
    io.roster.proto.cluster.v1.Backup backup = server.backup;
    if (backup != null && server.cluster == null) {
      server.restore(backup, server.writer);
    }
    server.warmUp.begin();
    try {
      server.endpoint.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.port(), e);
    }
    if (server.http != null) {
      try {
        server.http.start();
      } catch (IOException e) {
        server.close();
        throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.resolvedHttpPort()
            + " (the Nacos v1 HTTP API; --http-port picks another port, or off)", e);
      }
      log.info("Nacos v1 HTTP API on {}:{}", config.host(), server.http.port());
    }
    if (config.dnsPort() != ServerConfig.DNS_PORT_OFF) {
      DnsServer dns;
      try {
        dns = DnsServer.start(config.host(), config.dnsPort(), new DnsAnswers(server.registry, config.dnsTtl(),
            server.warmUp::isWarm, server.readiness),
            server.sessions.requests(), server.scheduler, config.dnsRateLimit());
      } catch (IOException e) {
        server.close();
        throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.dnsPort()
            + " (the DNS port, UDP and TCP; --dns-port picks another port, or off)", e);
      }
      server.dns = dns;
      log.info("DNS on {}:{} (UDP and TCP), zone roster.", config.host(), dns.port());
    }
    if (server.tls != null) {
      ServerTls tls = server.tls;
      log.info("TLS on the client port {} (Roster and Nacos gRPC){}: {}; {}; files re-read every {}", server.port(),
          server.http == null ? "" : " and the HTTP port " + server.http.port(), tls.describe(),
          tls.mutual() ? "client certificates required, signed by a CA of " + tls.files().clientCa()
              : "no client certificate asked", ServerConfig.formatDuration(ServerTls.RELOAD_PERIOD));
      tls.startReloading(server.scheduler, ServerTls.RELOAD_PERIOD);
    }
    if (server.cluster != null) {
      server.cluster.announce(server.clientAddress());
      if (backup != null) {
        ClusterNode node = server.cluster;
        Thread t = new Thread(() -> {
          // Caught up with the log, and taking writes: the restore goes through the log.
          node.caughtUp().join();
          server.firstWritable.join();
          server.restore(backup, server.writer);
        }, "roster-restore");
        t.setDaemon(true);
        t.start();
      }
    }
    server.probes.start();
    // The delta cache's classes load off the event loops, after SERVING (decision 22).
    server.scheduler.execute(server.engine.deltas()::prepare);
    return server;
  }

  /**
   * The host part of the node id: the listen address, or for a wildcard the HOSTNAME the
   * environment gives (no DNS lookup at startup).
   */
  private static String nodeHost(String host) {
    boolean wildcard = host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    String hostname = System.getenv("HOSTNAME");
    return wildcard && hostname != null && !hostname.isBlank() ? hostname : host;
  }

  /** Where clients reach this member: --advertise, or its --members host and the bound port. */
  private String clientAddress() {
    if (!config.advertise().isEmpty()) {
      return config.advertise();
    }
    return Objects.requireNonNull(cluster, "only a cluster member announces").memberHost() + ":" + port();
  }

  /** The bound DNS port (UDP and TCP), or -1 when it is off. */
  public int dnsPort() {
    DnsServer d = dns;
    return d == null ? -1 : d.port();
  }

  /** The bound port of the Nacos v1 HTTP API, or -1 when it is off. */
  public int httpPort() {
    return http == null ? -1 : http.port();
  }

  /** This server as a cluster member, or null when it is standalone. */
  public @Nullable ClusterNode cluster() {
    return cluster;
  }

  /** The bound client port. */
  public int port() {
    return endpoint.port();
  }

  public ServerConfig config() {
    return config;
  }

  /** The registry (read-only use: tests and admin tooling). */
  public Registry registry() {
    return registry;
  }

  /** Open Session/Connect streams, with or without a session yet (hello pending). */
  public int openStreams() {
    return endpoint.openSessions();
  }

  /**
   * This node's warm-up after its start. A cluster layer ends it early
   * ({@link WarmUp#warmUpDone()}) once the node has caught up from the log.
   */
  public WarmUp warmUp() {
    return warmUp;
  }

  /** The server's metrics (what GET /metrics serves). */
  public ServerMetrics metrics() {
    return metrics;
  }

  /** Live sessions. */
  public SessionManager sessions() {
    return sessions;
  }

  /**
   * Asks one client session to move to {@code suggestedServer} ({@code host:port}) with a
   * {@code reconnect} frame; see {@link GrpcEndpoint#askToMove}.
   *
   * @return false when no open session has that connection id
   */
  public boolean askToMove(String connectionId, String suggestedServer, String reason) {
    return endpoint.askToMove(connectionId, suggestedServer, reason);
  }

  /** Blocks until {@link #close()} has finished. */
  public void awaitTermination() throws InterruptedException {
    terminated.await();
  }

  private void closeDurable() {
    try {
      if (durable != null) {
        durable.close();
      }
      if (dataDir != null) {
        dataDir.close();
      }
    } catch (IOException e) {
      log.warn("Closing the data directory", e);
    }
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    log.info("Stopping: {} sessions asked to reconnect, grace {}", sessions.count(),
        ServerConfig.formatDuration(config.shutdownGrace()));
    DurableWriter durableWriter = durable;
    if (durableWriter != null) {
      // The sessions about to end take their instances with them, but not their holds: the
      // instances come back after the restart, and the holds with them.
      durableWriter.flush();
      registry.onHoldEnded(null);
    }
    probes.close();
    probeClient.close();
    engine.stop();
    authenticator.close();
    Audit.flushAll();
    DnsServer d = dns;
    if (d != null) {
      d.close();
    }
    if (tls != null) {
      tls.close();
    }
    // The HTTP API first: it says DOWN (as every status route: no longer ready), lets requests in
    // progress finish (1 s at most) and takes no more; heartbeat instances stay until the registry
    // goes (or, in a cluster, until the members end this member's owners).
    readiness.stopping("server shutting down");
    leases.close();
    if (http != null) {
      http.stop(Duration.ofSeconds(1));
    }
    try {
      if (cluster != null) {
        // From now on no client may move here: its redo would take its instances to a session
        // that ends with this member a moment later.
        endpoint.refuseNewSessions();
        // Writes (the ends of the sessions that are about to leave) must not wait for an election;
        // and no member may send (or balance) clients here any more.
        cluster.handOverLead(Duration.ofSeconds(2));
        cluster.leave(Duration.ofSeconds(2));
      }
      if (cluster != null) {
        // Sessions still here after the grace belong to live clients that were slow to move:
        // cutting them must not remove their instances before their redo elsewhere.
        endpoint.shutdown(config.shutdownGrace(), cluster::suggest, cluster::keepRemainingOwners);
      } else {
        endpoint.shutdown(config.shutdownGrace(), () -> "");
      }
      if (cluster != null) {
        cluster.awaitProposed(Duration.ofSeconds(2));
      }
    } catch (InterruptedException e) {
      endpoint.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      if (cluster != null) {
        cluster.close();
      }
      if (ownScheduler != null) {
        ownScheduler.close();
      }
      closeDurable();
      terminated.countDown();
    }
    log.info("Stopped");
  }
}
