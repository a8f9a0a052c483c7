package io.roster.server.nacos;

import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.stub.StreamObserver;
import io.roster.proto.nacos.BiRequestStreamGrpc;
import io.roster.proto.nacos.Payload;
import io.roster.proto.nacos.RequestGrpc;
import io.roster.server.registry.Registry;
import io.roster.server.session.SessionManager;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.List;

/**
 * The Nacos 2.x services ({@code Request}, {@code BiRequestStream}) for Roster's gRPC server:
 * add {@link #services()} and {@link #transportFilter()} to the server that serves {@code
 * roster.v1.*}, on the same port.
 *
 * <p>Thread-safe; owns no threads (silent-client checks run on the given scheduler).
 * Connections end with their transports, so stopping the gRPC server ends them all.
 */
public final class NacosEndpoint {

  private final NacosConnections connections;
  private final NacosService service;

  /**
   * Nacos connections become sessions of {@code sessions}; queries read {@code registry}. A
   * connection silent for {@code keepaliveTime} is sent a {@code ClientDetectionRequest}, and
   * one silent for {@code keepaliveTime + keepaliveTimeout} is ended ({@link ClientDetection}).
   */
  public NacosEndpoint(SessionManager sessions, Registry registry, Scheduler scheduler, Duration keepaliveTime,
      Duration keepaliveTimeout) {
    this.connections = new NacosConnections(sessions);
    this.service = new NacosService(sessions, registry, connections,
        new ClientDetection(scheduler, keepaliveTime, keepaliveTimeout));
  }

  /** Assigns each HTTP/2 transport its Nacos connection id and ends the connection with it. */
  public ServerTransportFilter transportFilter() {
    return connections;
  }

  /** {@code /Request/request} and {@code /BiRequestStream/requestBiStream}, with the connection id in their context. */
  public List<ServerServiceDefinition> services() {
    RequestGrpc.AsyncService unary = new RequestGrpc.AsyncService() {
      @Override
      public void request(Payload request, StreamObserver<Payload> response) {
        service.request(request, response);
      }
    };
    BiRequestStreamGrpc.AsyncService bidi = new BiRequestStreamGrpc.AsyncService() {
      @Override
      public StreamObserver<Payload> requestBiStream(StreamObserver<Payload> responses) {
        return service.stream(responses);
      }
    };
    return List.of(
        ServerInterceptors.intercept(RequestGrpc.bindService(unary), connections),
        ServerInterceptors.intercept(BiRequestStreamGrpc.bindService(bidi), connections));
  }

  /** Registered Nacos connections. */
  public int connectionCount() {
    return connections.count();
  }
}
