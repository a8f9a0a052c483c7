package io.roster.server;

import io.roster.server.config.ServerConfig;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Registry;
import io.roster.server.registry.WarmUp;
import io.roster.server.registry.ServiceLimits;
import io.roster.server.rpc.GrpcEndpoint;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.time.SystemScheduler;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CountDownLatch;
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
 * <p>{@link #close()} is graceful and idempotent: NOT_SERVING, {@code reconnect} to every
 * session, then stop within the configured grace period.
 */
public final class RosterServer implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(RosterServer.class);
  static final String VERSION = "0.1.0";

  private final ServerConfig config;
  private final SystemScheduler scheduler;
  private final Registry registry;
  private final SessionManager sessions;
  private final GrpcEndpoint endpoint;
  private final PushEngine engine;
  private final WarmUp warmUp;
  private final CountDownLatch terminated = new CountDownLatch(1);
  private boolean closed;

  private RosterServer(ServerConfig config) {
    this.config = config;
    this.scheduler = new SystemScheduler("roster-push", 1);
    this.registry = new Registry(() -> ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now()),
        config.maxServiceSettingsBytes(),
        new ServiceLimits(config.maxInstancesPerService(), config.maxServiceBytes()));
    this.engine = new PushEngine(registry, scheduler, config.pushWindow());
    registry.addListener(engine);
    this.sessions = new SessionManager(registry, engine, scheduler, config.pushAckTimeout(),
        new SessionLimits(config.maxInstancesPerConnection(), config.maxSubscriptionsPerConnection(),
            config.maxSessionsPerConnection(), config.maxWatchesPerConnection(), config.maxSessionsPerAddress(),
            config.maxInstancesPerAddress()));
    String boot = Long.toString(registry.bootRevision(), 36);
    // A fresh process: the clients of the previous one are still coming back (decision 20).
    this.warmUp = WarmUp.start(scheduler, config.warmUp());
    this.endpoint = new GrpcEndpoint(config, registry, engine, sessions, scheduler,
        port -> nodeHost(config.host()) + ":" + port + "@" + boot, VERSION, warmUp);
  }

  /** Builds and starts a server; returns once the port is bound and health is SERVING. */
  public static RosterServer start(ServerConfig config) {
    RosterServer server = new RosterServer(config);
    try {
      server.endpoint.start();
    } catch (IOException e) {
      server.scheduler.close();
      throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.port(), e);
    }
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

  /** Live sessions. */
  public SessionManager sessions() {
    return sessions;
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
    engine.stop();
    try {
      endpoint.shutdown(config.shutdownGrace());
    } catch (InterruptedException e) {
      endpoint.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      scheduler.close();
      terminated.countDown();
    }
    log.info("Stopped");
  }
}
