package io.roster.client;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ConnectionInfo;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts in-JVM Roster servers on real loopback ports for the end-to-end tests, and scales
 * real-time bounds by the one test time factor, {@link TestTime} of the server's test jar
 * (public: the unit tests of the internal package use {@link #scaled} and {@link #patience} too).
 */
public final class TestServers {

  private TestServers() {}

  /**
   * Starts a server on 127.0.0.1, on a free port when {@code port} is 0, warm from the start:
   * these tests check steady-state behaviour, which a warm-up would delay (decision 20).
   */
  static RosterServer start(int port) {
    return RosterServer.start(ServerConfig.builder().dataDir(null)
        .host("127.0.0.1")
        .port(port)
        .warmUp(Duration.ZERO)
        .build());
  }

  /** A bound for waiting on something that normally takes milliseconds. */
  public static Duration patience() {
    return TestTime.seconds(10);
  }

  /** A client builder for the given server with test-friendly defaults. */
  static RosterClient.Builder client(RosterServer server) {
    return RosterClient.builder()
        .serverAddresses("127.0.0.1:" + server.port())
        .requestTimeout(scaled(Duration.ofSeconds(3)));
  }

  /** The server's own counters of a service ({@code Registry/GetService}, default group), over a socket. */
  static GetServiceResponse serviceOnServer(RosterServer server, String service) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    try {
      return RegistryGrpc.newBlockingStub(ch).withDeadlineAfter(patience().toMillis(), TimeUnit.MILLISECONDS)
          .getService(GetServiceRequest.newBuilder().setService(ServiceKey.newBuilder().setName(service)).build());
    } finally {
      ch.shutdownNow();
    }
  }

  /** The server's live sessions of a client id ({@code Admin/ListConnections}), over a socket. */
  static List<ConnectionInfo> connectionsOnServer(RosterServer server, String clientId) {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    try {
      return AdminGrpc.newBlockingStub(ch).withDeadlineAfter(patience().toMillis(), TimeUnit.MILLISECONDS)
          .listConnections(ListConnectionsRequest.newBuilder().setClientId(clientId).build()).getConnectionsList();
    } finally {
      ch.shutdownNow();
    }
  }

  /** {@code d} times the time factor ({@link TestTime#scaled}). */
  public static Duration scaled(Duration d) {
    return TestTime.scaled(d);
  }
}
