package io.roster.server.rpc;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.SessionGrpc;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.roster.server.auth.Authenticator;
import io.roster.server.cluster.Members;
import io.roster.server.config.ServerConfig;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.Door;
import io.roster.server.session.SessionManager;
import io.roster.server.time.Deadline;
import io.roster.server.time.Scheduler;
import io.roster.server.tls.ServerTls;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The client-facing gRPC server: Session, Registry, Admin, health and reflection on one
 * port, with the services of other protocols that share it ({@link Guest}: the Nacos 2.x
 * services), and HTTP/2 keepalive that drops silent peers; plaintext, or TLS for every protocol
 * on the port alike when given a {@link ServerTls}. Owns the Netty server, and drives the
 * {@link Door} of every protocol on its port alike: refused, moved, awaited. What it serves
 * follows the server's {@link Readiness}: health says SERVING only while it is ready, and new
 * sessions are refused while it is not; the Registry and xDS services refuse reads while the
 * server's registry is not the cluster's.
 */
public final class GrpcEndpoint {

  private static final List<String> SERVICES = List.of(
      SessionGrpc.SERVICE_NAME, RegistryGrpc.SERVICE_NAME, AdminGrpc.SERVICE_NAME);

  private static final long MIN_TRANSPORT_KEEPALIVE_MS = 10_000;
  /** After the last session left: how long idle connections and refused calls get to finish. */
  private static final Duration SETTLE = Duration.ofMillis(500);

  private final Server server;
  private final SessionService sessionService;
  private final RegistryService registryService;
  private final IntFunction<String> nodeId;
  private final SessionManager sessions;
  /** The door of every protocol on this port: the Roster protocol's first, then each guest's. */
  private final List<Door> doors = new ArrayList<>();
  /** The doors whose connections a stop waits for: see {@link Guest#awaitOnStop}. */
  private final List<Door> awaited = new ArrayList<>();
  private final HealthStatusManager health = new HealthStatusManager();
  private final Readiness readiness;
  private volatile boolean started;

  /**
   * Another protocol served on this port.
   *
   * @param services its gRPC services
   * @param filter its transport filter (it sees each connection come and go), or null
   * @param door its connections, driven with the Roster protocol's sessions
   * @param awaitOnStop whether a stop waits for its connections to leave: a cluster member's
   *     have other members to move to; a standalone server's may have nowhere to go (a Nacos
   *     client whose list names only this server), and waiting would only delay the stop
   */
  public record Guest(List<ServerServiceDefinition> services, @Nullable ServerTransportFilter filter, Door door,
      boolean awaitOnStop) {}

  /**
   * @param nodeId this node's id given the bound port, told to clients in {@code welcome}
   * @param warmUp this node's warm-up, told in {@code welcome} and query answers
   */
  public GrpcEndpoint(ServerConfig config, Registry registry, PushEngine engine, SessionManager sessions,
      Scheduler scheduler, IntFunction<String> nodeId, String version, WarmUp warmUp) {
    this(config, registry, engine, sessions, scheduler, nodeId, version, warmUp, null, List.of(), null,
        Readiness.ready());
  }

  /**
   * @param cluster the cluster as this member sees it (Admin/ListMembers), or null when standalone
   * @param guests the other protocols served on this port (docs/nacos-compat.md)
   * @param tls the port's TLS material (every protocol on it alike), or null for plaintext
   * @param readiness whether the server serves now, and why not (every protocol on the port alike)
   */
  public GrpcEndpoint(ServerConfig config, Registry registry, PushEngine engine, SessionManager sessions,
      Scheduler scheduler, IntFunction<String> nodeId, String version, WarmUp warmUp, @Nullable Members cluster,
      List<Guest> guests, @Nullable ServerTls tls, Readiness readiness) {
    this.nodeId = nodeId;
    this.sessions = sessions;
    this.readiness = readiness;
    this.registryService = new RegistryService(registry, sessions.writer(), engine, scheduler, sessions.limits(),
        warmUp, sessions.requests(), sessions::probePolicy, readiness);
    this.sessionService = new SessionService(sessions, registryService::answer, config.sessions().keepaliveTime(),
        config.sessions().keepaliveTimeout(), config.sessions().pushAckTimeout(), scheduler, version, config.limits().maxMessageSize(), warmUp);
    doors.add(sessionService);
    awaited.add(sessionService);
    Connections connections = new Connections(sessions);
    CountedCalls counted = new CountedCalls(sessions.requests());
    XdsService xds = new XdsService(registry, scheduler, readiness);
    registry.addListener(xds);
    // Every check of the auth file: long-lived calls of identities it no longer has end, as sessions do.
    Authenticator authenticator = sessions.authenticator();
    authenticator.onCheck(() -> {
      xds.revalidate(authenticator);
      registryService.revalidate(authenticator);
    });
    InetSocketAddress address = new InetSocketAddress(config.host(), config.port());
    NettyServerBuilder builder = tls == null ? NettyServerBuilder.forAddress(address)
        : NettyServerBuilder.forAddress(address, tls.grpcCredentials());
    for (Guest guest : guests) {
      if (guest.filter() != null) {
        builder.addTransportFilter(guest.filter());
      }
      guest.services().forEach(builder::addService);
      doors.add(guest.door());
      if (guest.awaitOnStop()) {
        awaited.add(guest.door());
      }
    }
    this.server = builder
        // Session frames over --max-message-size are refused by SessionService with a status
        // naming the limit; gRPC's own check (which only cancels) is the backstop above that.
        .maxInboundMessageSize(backstop(config.limits().maxMessageSize()))
        .addTransportFilter(connections)
        .intercept(new Callers(sessions))
        .intercept(connections)
        // gRPC raises anything under 10 s to 10 s; SessionService's silence check gives
        // sessions the configured bound, this is the transport-level backstop (and covers Watch).
        .keepAliveTime(Math.max(MIN_TRANSPORT_KEEPALIVE_MS, config.sessions().keepaliveTime().toMillis()), TimeUnit.MILLISECONDS)
        .keepAliveTimeout(config.sessions().keepaliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .permitKeepAliveTime(1, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .addService(sessionService.definition())
        .addService(ServerInterceptors.intercept(registryService, counted))
        .addService(ServerInterceptors.intercept(new AdminService(sessions, cluster, readiness), counted))
        .addService(ServerInterceptors.intercept(xds, counted))
        .addService(health.getHealthService())
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(reflectionV1Alpha())
        .fallbackHandlerRegistry(new UnknownMethods(sessions.requests()))
        .directExecutor()
        .build();
    setHealth(ServingStatus.NOT_SERVING);
    readiness.onChange(this::readinessChanged);
    readinessChanged();
  }

  /** Reflection's v1alpha service, which gRPC deprecates for v1 but older tools still ask for. */
  @SuppressWarnings("deprecation") // served beside v1 on purpose (protocol.md): clients that only know v1alpha
  private static io.grpc.BindableService reflectionV1Alpha() {
    return ProtoReflectionService.newInstance();
  }

  /**
   * Runs this protocol's per-request code once on sample values (decoding and mapping each frame
   * kind, encoding an answer), so that a fresh server's first client does not pay for loading
   * and linking it. Called by the start's priming; touches no server's state.
   */
  public static void prime() {
    Priming.run();
  }

  /**
   * Runs one xDS exchange through a scratch xDS service on {@code registry} (the start's
   * priming): {@code service}'s listener, cluster and assignment, then the assignment {@code
   * change} pushes. Returns what it saw; throws when a client would have seen something else.
   */
  public static String primeXds(io.roster.server.registry.Registry registry, Scheduler scheduler,
      io.roster.server.model.ServiceKey service, java.util.concurrent.Callable<?> change) throws Exception {
    return XdsPriming.run(registry, scheduler, service, change);
  }

  /** Encodes {@code push} as a session's stream would (the start's priming; nothing is sent). */
  public static void primePush(io.roster.server.push.PushPayload push) {
    SessionService.encodePush(push);
  }

  /** Binds the port and reports SERVING (unless the server is not ready yet). */
  public void start() throws IOException {
    server.start();
    String id = nodeId.apply(server.getPort());
    sessions.nodeId(id);
    sessionService.nodeId(id);
    synchronized (this) {
      started = true;
      readinessChanged();
    }
  }

  /**
   * The server's readiness changed: while it is not ready (a cluster member that has not joined,
   * is catching up or cannot take writes) every protocol refuses new sessions with UNAVAILABLE
   * naming why, and health says NOT_SERVING; once ready, both accept again.
   */
  private synchronized void readinessChanged() {
    String why = readiness.notReady();
    doors.forEach(d -> d.refuse(why));
    if (started) {
      setHealth(why == null ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
    }
  }

  /**
   * Asks the sessions {@code which} selects to move ({@code reconnect}, with a server {@code
   * suggest} names for each; Nacos connections get a {@code ConnectResetRequest}); returns how
   * many were asked.
   */
  public int moveSessions(String reason, Predicate<io.roster.server.session.Session> which, Supplier<String> suggest) {
    return sessions.move(reason, which, suggest);
  }

  /** The bound port (useful when configured as 0). */
  public int port() {
    return server.getPort();
  }

  /** Number of open Connect streams. */
  public int openSessions() {
    return sessionService.openCalls();
  }

  /**
   * Asks one client session to move to another server: a {@code reconnect} frame with {@code
   * suggestedServer} (a client address, {@code host:port}) as the suggested member. Nothing else
   * changes here: the session stays until the client leaves. For rebalancing tools and tests.
   *
   * @return false when no open session has that connection id
   */
  public boolean askToMove(String connectionId, String suggestedServer, String reason) {
    return sessions.move(reason, s -> s.info().connectionId().equals(connectionId), () -> suggestedServer) > 0;
  }

  /**
   * The first step of stopping: NOT_SERVING, and no new sessions (refused with UNAVAILABLE);
   * the sessions here are left alone until {@link #shutdown}. A cluster member calls this before
   * it hands over its lead and leaves, so that no client moves here meanwhile.
   */
  public void refuseNewSessions() {
    health.enterTerminalState();
    doors.forEach(d -> d.refuseNew("server shutting down"));
  }

  /**
   * Stops gracefully: NOT_SERVING, every connection of every protocol asked to move (a {@code
   * reconnect} to every session, a {@code ConnectResetRequest} to every Nacos connection), no new
   * sessions or calls; returns as soon as every session (and every guest's connection whose stop
   * is awaited) has left, or cuts whatever is left once {@code grace} is over.
   */
  public void shutdown(Duration grace) throws InterruptedException {
    shutdown(grace, () -> "");
  }

  /**
   * Same, suggesting to each session the server {@code suggest} names (a cluster member names
   * the live members in turn, so that its clients spread over them).
   */
  public void shutdown(Duration grace, Supplier<String> suggest) throws InterruptedException {
    shutdown(grace, suggest, () -> { });
  }

  /**
   * Same, running {@code beforeCut} once the sessions have left or the grace is over, before
   * the sessions still open are cut (a cluster member then keeps their owners out of the log).
   */
  public void shutdown(Duration grace, Supplier<String> suggest, Runnable beforeCut)
      throws InterruptedException {
    Deadline deadline = Deadline.after(grace);
    health.enterTerminalState();
    registryService.stop("server shutting down");
    readiness.stopping("server shutting down");
    doors.forEach(d -> d.moveAll("server shutting down", suggest));
    server.shutdown();
    for (Door d : awaited) {
      d.awaitAllEnded(deadline.remaining());
    }
    beforeCut.run();
    // Every session has left (or the grace is over). What remains are idle connections and
    // calls that are answered UNAVAILABLE: a moment for those answers, then the cut.
    long settle = Math.min(deadline.remainingNanos(), SETTLE.toNanos());
    if (!server.awaitTermination(settle, TimeUnit.NANOSECONDS)) {
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** gRPC's own inbound limit: twice the session frame limit. */
  private static int backstop(int maxMessageSize) {
    return (int) Math.min(Integer.MAX_VALUE, 2L * maxMessageSize);
  }

  /** Stops at once. */
  public void shutdownNow() {
    server.shutdownNow();
  }

  private void setHealth(ServingStatus status) {
    health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, status);
    for (String s : SERVICES) {
      health.setStatus(s, status);
    }
  }
}
