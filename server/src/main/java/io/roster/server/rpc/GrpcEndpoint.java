package io.roster.server.rpc;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionService;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.SessionGrpc;
import io.roster.server.config.ServerConfig;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Registry;
import io.roster.server.session.SessionManager;
import io.roster.server.time.Scheduler;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.function.IntFunction;
import java.util.concurrent.TimeUnit;

/**
 * The client-facing gRPC server: Session, Registry, Admin, health and reflection on one
 * port, with HTTP/2 keepalive that drops silent peers. Owns the Netty server.
 */
public final class GrpcEndpoint {

  private static final List<String> SERVICES = List.of(
      SessionGrpc.SERVICE_NAME, RegistryGrpc.SERVICE_NAME, AdminGrpc.SERVICE_NAME);

  private static final long MIN_TRANSPORT_KEEPALIVE_MS = 10_000;

  private final Server server;
  private final SessionService sessionService;
  private final RegistryService registryService;
  private final IntFunction<String> nodeId;
  private final HealthStatusManager health = new HealthStatusManager();

  /** @param nodeId this node's id given the bound port, told to clients in {@code welcome} */
  public GrpcEndpoint(ServerConfig config, Registry registry, PushEngine engine, SessionManager sessions,
      Scheduler scheduler, IntFunction<String> nodeId, String version) {
    this.nodeId = nodeId;
    this.registryService = new RegistryService(registry, engine, scheduler);
    this.sessionService = new SessionService(sessions, registryService::answer, config.keepaliveTime(),
        config.keepaliveTimeout(), config.pushAckTimeout(), scheduler, version);
    RemoteAddressInterceptor remote = new RemoteAddressInterceptor();
    this.server = NettyServerBuilder.forAddress(new InetSocketAddress(config.host(), config.port()))
        // gRPC raises anything under 10 s to 10 s; SessionService's silence check gives
        // sessions the configured bound, this is the transport-level backstop (and covers Watch).
        .keepAliveTime(Math.max(MIN_TRANSPORT_KEEPALIVE_MS, config.keepaliveTime().toMillis()), TimeUnit.MILLISECONDS)
        .keepAliveTimeout(config.keepaliveTimeout().toMillis(), TimeUnit.MILLISECONDS)
        .permitKeepAliveTime(1, TimeUnit.SECONDS)
        .permitKeepAliveWithoutCalls(true)
        .addService(ServerInterceptors.intercept(sessionService.definition(), remote))
        .addService(registryService)
        .addService(new AdminService(sessions))
        .addService(health.getHealthService())
        .addService(ProtoReflectionServiceV1.newInstance())
        .addService(ProtoReflectionService.newInstance())
        .directExecutor()
        .build();
    setHealth(ServingStatus.NOT_SERVING);
  }

  /** Binds the port and reports SERVING. */
  public void start() throws IOException {
    server.start();
    sessionService.nodeId(nodeId.apply(server.getPort()));
    setHealth(ServingStatus.SERVING);
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
   * Stops gracefully: NOT_SERVING, {@code reconnect} to every session, no new calls; waits up
   * to {@code grace} for clients to leave, then cuts whatever is left.
   */
  public void shutdown(Duration grace) throws InterruptedException {
    health.enterTerminalState();
    registryService.stop("server shutting down");
    sessionService.reconnectAll("server shutting down");
    server.shutdown();
    if (!server.awaitTermination(grace.toMillis(), TimeUnit.MILLISECONDS)) {
      server.shutdownNow();
      server.awaitTermination(5, TimeUnit.SECONDS);
    }
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
