package io.roster.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Server;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.TestPki;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The container health check (docker/Dockerfile): exit 0 only for a server whose health says
 * SERVING; 1 for NOT_SERVING, a refused port, a peer that never answers, or a bad argument.
 */
class HealthProbeTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();

  private int probe(Duration deadline, String... args) {
    return HealthProbe.run(args, deadline, new PrintStream(printed, true, StandardCharsets.UTF_8));
  }

  private String printed() {
    return printed.toString(StandardCharsets.UTF_8);
  }

  @Test
  void servingRosterServerExitsZero() {
    loopback.start();

    assertThat(probe(TestTime.seconds(2), Integer.toString(loopback.port()))).as(printed()).isZero();
    assertThat(printed()).isEqualTo("127.0.0.1:" + loopback.port() + " SERVING" + System.lineSeparator());
  }

  @Test
  void notServingExitsOne() throws Exception {
    HealthStatusManager health = new HealthStatusManager();
    health.setStatus(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, ServingStatus.NOT_SERVING);
    Server server = NettyServerBuilder.forAddress(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
        .addService(health.getHealthService()).build().start();
    try {
      assertThat(probe(TestTime.seconds(2), Integer.toString(server.getPort()))).isEqualTo(1);
      assertThat(printed()).contains("NOT_SERVING");
    } finally {
      server.shutdownNow();
    }
  }

  @Test
  void refusedPortExitsOne() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // closed again: nothing listens there now
    }

    assertThat(probe(TestTime.seconds(2), Integer.toString(port))).isEqualTo(1);
    assertThat(printed()).contains("UNAVAILABLE");
  }

  @Test
  void peerThatNeverAnswersExitsOneAtTheDeadline() throws Exception {
    // The kernel completes the TCP handshake on the backlog; nobody ever reads or writes.
    try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      assertThat(probe(Duration.ofMillis(300), Integer.toString(silent.getLocalPort()))).isEqualTo(1);
      assertThat(printed()).contains("DEADLINE_EXCEEDED");
    }
  }

  @Test
  void aTlsServerIsProbedOverTlsFromTheEnvironmentAlsoWithClientCertificates(@TempDir Path dir) {
    TestPki pki = TestPki.in(dir);
    for (boolean mutual : new boolean[] {false, true}) {
      try (RosterServer server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).httpPort(-1)
          .warmUp(Duration.ZERO).shutdownGrace(Duration.ZERO).tls(pki.files(mutual)).build())) {
        String port = Integer.toString(server.port());
        Map<String, String> env = new java.util.HashMap<>(Map.of("ROSTER_TLS_CERT", pki.serverCert.toString(),
            "ROSTER_TLS_KEY", pki.serverKey.toString()));
        if (mutual) {
          env.put("ROSTER_TLS_CLIENT_CA", pki.caPem.toString());
        }
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        assertThat(HealthProbe.run(new String[] {port}, env, TestTime.seconds(2), out)).as(printed()).isZero();
        // Plaintext is refused by a TLS port.
        assertThat(HealthProbe.run(new String[] {port}, Map.of(), TestTime.seconds(2), out)).isEqualTo(1);
      }
    }
  }

  @Test
  void badArgumentsExitOneWithUsage() {
    assertThat(probe(TestTime.seconds(2), "abc")).isEqualTo(1);
    assertThat(probe(TestTime.seconds(2), "0")).isEqualTo(1);
    assertThat(probe(TestTime.seconds(2), "9848", "9849")).isEqualTo(1);
    assertThat(printed()).contains("usage: HealthProbe [port]: port: abc (expected: 1..65535)")
        .contains("port: 0 (expected: 1..65535)").contains("one argument expected, got 2");
  }
}
