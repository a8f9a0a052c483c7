package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.nacos.Payload;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.TestTime;
import io.roster.server.tls.Pki;
import io.roster.server.tls.TlsFiles;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Nacos gRPC protocol on a port with mutual TLS and auth on (decision 80): a connection whose
 * client certificate the auth file maps to an identity sends naming requests without an {@code
 * accessToken} as that identity, with its grants; a certificate the file does not map is refused
 * 403 naming what was missing and its SANs; and the connection ends when its entry is removed.
 */
class NacosCertificateAuthTest {

  private static final Duration WAIT = TestTime.seconds(10);

  @TempDir Path dir;
  private final Pki.Authority ca = Pki.newAuthority("roster-test-ca");
  private Path caFile;
  private Path authFile;
  private AuthFiles auth;
  private RosterServer server;
  private final List<ManagedChannel> channels = new ArrayList<>();

  @BeforeEach
  void start() throws IOException {
    caFile = dir.resolve("ca.crt");
    ca.writeCertificatePem(caFile);
    Path cert = dir.resolve("server.crt");
    Path key = dir.resolve("server.key");
    ca.issue("roster-server", List.of("127.0.0.1", "localhost")).writePem(cert, key);
    authFile = dir.resolve("auth.json");
    auth = AuthFiles.create(authFile).certificate("nacos-app", "nacos-app.corp.example", "write@public/orders");
    server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).httpPort(0)
        .shutdownGrace(Duration.ofMillis(200)).warmUp(Duration.ZERO).tls(new TlsFiles(cert, key, caFile))
        .authFile(authFile).build());
  }

  @AfterEach
  void stop() {
    channels.forEach(ManagedChannel::shutdownNow);
    server.close();
  }

  @Test
  void aConnectionWithAMappedCertificateRegistersWithoutATokenWithinItsGrantsAndEndsWhenItsEntryGoes() {
    NacosConn app = connection("nacos-app.corp.example").setup();

    assertThat(ok(app.call("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80)))).isTrue();
    JsonNode denied = Envelope.body(app.call("InstanceRequest", NacosConn.register("payments", "10.0.0.1", 80)));
    assertThat(denied.get("errorCode").asInt()).isEqualTo(Envelope.NO_RIGHT);
    assertThat(denied.get("message").asText()).contains("\"nacos-app\" lacks permission write on namespace "
        + "\"public\", service \"DEFAULT_GROUP@@payments\"");
    assertThat(registered("orders")).containsExactly("10.0.0.1:80");

    auth.remove("nacos-app");
    await().atMost(WAIT).until(() -> app.streamEnded);
    await().atMost(WAIT).until(() -> registered("orders").isEmpty());
  }

  @Test
  void aCertificateTheAuthFileDoesNotMapIs403NamingWhatWasMissingAndItsSans() {
    NacosConn stranger = connection("stranger.corp.example").setup();

    JsonNode refused = Envelope.body(stranger.call("InstanceRequest", NacosConn.register("orders", "10.0.0.2", 80)));
    assertThat(refused.get("errorCode").asInt()).isEqualTo(Envelope.NO_RIGHT);
    assertThat(refused.get("message").asText()).contains("accessToken: missing (expected: a token, or a client "
        + "certificate the auth file maps to an identity; this certificate's SANs map to no identity: "
        + "DNS:stranger.corp.example");
    assertThat(registered("orders")).isEmpty();
  }

  private NacosConn connection(String san) {
    Path cert = dir.resolve(san + ".crt");
    Path key = dir.resolve(san + ".key");
    try {
      ca.issue(san, List.of(san)).writePem(cert, key);
      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port(),
          TlsChannelCredentials.newBuilder().trustManager(caFile.toFile()).keyManager(cert.toFile(), key.toFile())
              .build()).build();
      channels.add(channel);
      return new NacosConn(channel);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean ok(Payload p) {
    return Envelope.body(p).path("success").asBoolean(false);
  }

  private List<String> registered(String service) {
    return server.registry().snapshot(ServiceKey.of("", "", service)).instances().stream()
        .map(i -> i.ip() + ":" + i.port()).sorted().toList();
  }
}
