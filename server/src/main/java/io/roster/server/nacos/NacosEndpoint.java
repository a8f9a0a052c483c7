package io.roster.server.nacos;

import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServerTransportFilter;
import io.grpc.stub.StreamObserver;
import io.roster.proto.nacos.BiRequestStreamGrpc;
import io.roster.proto.nacos.Payload;
import io.roster.proto.nacos.RequestGrpc;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.session.Door;
import io.roster.server.session.SessionManager;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The Nacos 2.x services ({@code Request}, {@code BiRequestStream}) for Roster's gRPC server:
 * add {@link #services()} and {@link #transportFilter()} to the server that serves {@code
 * roster.v1.*}, on the same port.
 *
 * <p>Thread-safe; owns no threads (silent-client checks run on the given scheduler).
 * Connections end with their transports, so stopping the gRPC server ends them all; {@link
 * #moveAll} asks them to leave first.
 */
public final class NacosEndpoint implements Door {

  private final NacosConnections connections;
  private final NacosService service;
  private final NacosStreams streams;

  /**
   * Nacos connections become sessions of {@code sessions}; queries read {@code registry}. A
   * connection silent for {@code keepaliveTime} is sent a {@code ClientDetectionRequest}, and
   * one silent for {@code keepaliveTime + keepaliveTimeout} is ended ({@link ClientDetection}).
   * Queries are refused while {@code readiness} says the registry may not be read.
   */
  public NacosEndpoint(SessionManager sessions, Registry registry, Scheduler scheduler, Duration keepaliveTime,
      Duration keepaliveTimeout, Readiness readiness) {
    NacosTrace trace = new NacosTrace(scheduler);
    this.connections = new NacosConnections(sessions, trace);
    ClientDetection detection = new ClientDetection(scheduler, keepaliveTime, keepaliveTimeout);
    this.service = new NacosService(sessions, registry, connections, detection, readiness, trace);
    this.streams = new NacosStreams(sessions, connections, detection, trace);
  }

  /**
   * Runs this protocol's per-request code once on sample values (reading and mapping each naming
   * request's body, writing an answer), so that a fresh server's first Nacos client does not pay
   * for loading and linking it: its connection's first exchanges (server check, setup and its
   * ack), the naming requests and a push's ack. Called by the start's priming; touches no
   * server's state. Returns the Nacos messages it primed, by type.
   */
  public static List<String> prime() {
    return Priming.run();
  }

  /** Encodes {@code push} as a Nacos connection would (the start's priming; nothing is sent). */
  public static void primePush(io.roster.server.push.PushPayload push) {
    NacosConnection.encodePush(push);
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
        return streams.open(responses);
      }
    };
    return List.of(
        ServerInterceptors.intercept(RequestGrpc.bindService(unary), connections),
        ServerInterceptors.intercept(BiRequestStreamGrpc.bindService(bidi), connections));
  }

  /**
   * The server is stopping: {@code ServerCheckRequest} and setups are refused from now on, and
   * every connection is asked to move (a {@code ConnectResetRequest} naming the server {@code suggest}
   * gives for it, a Roster client address {@code host:port}; empty: the client's next server). A
   * connection that then ends keeps its instances while its client redoes them elsewhere.
   */
  @Override
  public void moveAll(String reason, Supplier<String> suggest) {
    connections.moveAll(reason, suggest);
  }

  /** Refuses new connections from now on (the server is about to stop); the present ones stay. */
  @Override
  public void refuseNew(String reason) {
    connections.refuseNew(reason);
  }

  /** Refuses new connections for now ({@code reason}: a cluster member catching up or cut off), or again accepts them ({@code null}). */
  @Override
  public void refuse(@Nullable String reason) {
    connections.refuse(reason);
  }

  /** Waits until every connection has ended after {@link #moveAll}, or {@code timeout}; true if they all did. */
  @Override
  public boolean awaitAllEnded(Duration timeout) throws InterruptedException {
    return connections.awaitAllEnded(timeout);
  }

  /** Registered Nacos connections. */
  public int connectionCount() {
    return connections.count();
  }
}
