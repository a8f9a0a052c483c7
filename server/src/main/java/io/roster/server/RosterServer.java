package io.roster.server;

import io.roster.server.auth.Audit;
import io.roster.server.auth.Authenticator;
import io.roster.server.cluster.ClusterNode;
import io.roster.server.cluster.EntryClock;
import io.roster.server.config.ServerConfig;
import io.roster.server.dns.DnsAnswers;
import io.roster.server.dns.DnsServer;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.metrics.ServerMetrics;
import io.roster.server.nacos.NacosEndpoint;
import io.roster.server.nacos.NacosHttpApi;
import io.roster.server.naming.Leases;
import io.roster.server.probe.HealthProbes;
import io.roster.server.probe.ProbeClient;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceLimits;
import io.roster.server.registry.WarmUp;
import io.roster.server.registry.Writer;
import io.roster.server.rpc.GrpcEndpoint;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.store.Backup;
import io.roster.server.store.DataDir;
import io.roster.server.store.DurableWriter;
import io.roster.server.time.Scheduler;
import io.roster.server.time.SystemScheduler;
import io.roster.server.tls.ServerTls;
import io.roster.server.tls.TlsFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
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
    TlsFiles tlsFiles = config.tls().files();
    this.tls = tlsFiles == null ? null : ServerTls.load(tlsFiles);
    // A member's revisions come from the log's entries, the same on every member (docs/cluster.md).
    EntryClock entryClock = config.clustered() ? ClusterNode.entryClock() : null;
    this.registry = new Registry(entryClock != null ? entryClock : wallClockMicros, config.limits().maxServiceSettingsBytes(),
        new ServiceLimits(config.limits().maxInstancesPerService(), config.limits().maxServiceBytes()));
    this.engine = new PushEngine(registry, scheduler, config.sessions().pushWindow());
    registry.addListener(engine);
    String incarnation = Long.toString(wallClockMicros.getAsLong() / 1000, 36);
    // The backup before the data directory: a bad one stops the start with the directory untouched.
    this.backup = Durability.readBackup(config);
    this.dataDir = Durability.openDataDir(config);
    this.readiness = entryClock == null ? Readiness.ready() : Readiness.notYet(ClusterNode.CATCHING_UP);
    this.cluster = entryClock == null ? null
        : ClusterNode.start(config.cluster(), config.host(), Objects.requireNonNull(config.dataDir(),
            "a member's data directory"), registry, entryClock,
            new MemberCallbacks(this::warmUp, readiness, firstWritable, this::endpoint, this::sessions,
                config.cluster().balanceSettle()), wallClockMicros, incarnation);
    Writer writer;
    if (cluster != null) {
      writer = cluster.writer();
    } else if (dataDir != null) {
      // Durable state is read back before anything is served.
      durable = Durability.openStandalone(dataDir, registry);
      writer = durable;
    } else {
      writer = Writer.direct(registry);
    }
    this.writer = writer;
    this.sessions = new SessionManager(registry, writer, engine, scheduler, config.sessions().pushAckTimeout(),
        new SessionLimits(config.limits().maxInstancesPerConnection(), config.limits().maxSubscriptionsPerConnection(),
            config.limits().maxSessionsPerConnection(), config.limits().maxWatchesPerConnection(), config.limits().maxSessionsPerAddress(),
            config.limits().maxInstancesPerAddress()));
    this.authenticator = config.auth().authFile() == null ? Authenticator.off()
        : Authenticator.open(config.auth().authFile(), config.auth().tokenTtl(), scheduler);
    sessions.authenticator(authenticator);
    sessions.probePolicy(config.probes().probeAllow());
    // Every check of the auth file: sessions get their identities' current grants, or end.
    authenticator.onCheck(sessions::revalidate);
    authenticator.onCheck(Audit::flush); // refusal windows that ended are written within a check of the file
    String boot = Long.toString(registry.bootRevision(), 36);
    DurableWriter d = durable;
    this.warmUp = StartWindow.open(scheduler, config.sessions(), registry, sessions, d);
    if (d != null) {
      Durability.flushHeldEnds(scheduler, d, this::isClosed);
    }
    NacosEndpoint nacos = new NacosEndpoint(sessions, registry, scheduler, config.sessions().keepaliveTime(),
        config.sessions().keepaliveTimeout(), readiness);
    this.endpoint = new GrpcEndpoint(config, registry, engine, sessions, scheduler,
        cluster != null ? port -> cluster.ownerNode() : port -> nodeHost(config.host()) + ":" + port + "@" + boot,
        VERSION, warmUp, cluster,
        List.of(new GrpcEndpoint.Guest(nacos.services(), nacos.transportFilter(), nacos, cluster != null)), tls,
        readiness);
    this.leases = new Leases(writer, registry, scheduler, sessions::nodeId, config.limits().maxInstancesPerAddress());
    this.probeClient = new ProbeClient(config.probes().probeTimeout(), MAX_PROBES_IN_FLIGHT, config.probes().probeAllow());
    ClusterNode node = cluster;
    this.probes = new HealthProbes(registry, writer, probeClient, scheduler,
        node == null ? HealthProbes.Live::standalone : () -> new HealthProbes.Live(node.memberId(), node.liveMembers()),
        new HealthProbes.Timing(config.probes().probeInterval(), config.probes().probeThreshold()));
    this.nacosHttp = new NacosHttpApi(registry, writer, leases, sessions::count, authenticator, sessions::probePolicy,
        readiness);
    int httpPort = config.resolvedHttpPort();
    this.http = httpPort < 0 ? null : new HttpEndpoint(config.host(), httpPort,
        HttpEndpoint.Limits.DEFAULT.withRequestTimeout(config.http().httpRequestTimeout()), tls);
    this.metrics = new ServerMetrics(new ServerMetrics.Sources(VERSION, registry, sessions, engine, warmUp,
        authenticator, endpoint::openSessions, nacos::connectionCount, http == null ? () -> 0 : http::openConnections,
        cluster, wallClockMicros, probes::counts));
    metrics.certificateExpiry(Listeners.certificates(tls, http != null, cluster == null ? null : config.cluster()));
    if (dataDir != null) {
      try {
        metrics.dataDir(dataDir.path());
      } catch (IOException e) {
        log.warn("Cannot read the file system of {}: its size and free space are not in /metrics ({})", dataDir.path(),
            e.toString());
      }
    }
    if (http != null) {
      HttpRoutes.routeOn(http, sessions, metrics, registry, authenticator, readiness, nacosHttp, writer, engine, cluster,
          wallClockMicros);
    }
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  /** The endpoint, once built (the cluster's callbacks are made before it). */
  private GrpcEndpoint endpoint() {
    return endpoint;
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
      Durability.restore(backup, server.writer, server.registry, Objects.requireNonNull(server.config.restore()),
          false);
    }
    server.warmUp.begin();
    try {
      server.endpoint.start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.port(), e);
    }
    if (server.http != null) {
      Listeners.startHttp(server.http, config, server::close);
    }
    if (config.dns().dnsPort() != ServerConfig.DNS_PORT_OFF) {
      server.dns = Listeners.startDns(config, new DnsAnswers(server.registry, config.dns().dnsTtl(),
          server.warmUp::isWarm, server.readiness), server.sessions.requests(), server.scheduler, server::close);
    }
    if (server.tls != null) {
      Listeners.startTls(server.tls, server.port(), server.http, server.scheduler);
    }
    if (server.cluster != null) {
      server.cluster.announce(server.clientAddress());
      if (backup != null) {
        Durability.restoreThroughLog(server.cluster, server.firstWritable, backup, server.writer, server.registry,
            Objects.requireNonNull(server.config.restore()));
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
    if (!config.cluster().advertise().isEmpty()) {
      return config.cluster().advertise();
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
      Durability.close(durable, dataDir);
      terminated.countDown();
    }
    log.info("Stopped");
  }
}
