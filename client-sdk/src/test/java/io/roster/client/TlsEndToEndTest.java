package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.session.Session;
import io.roster.server.testing.TestPki;
import io.roster.server.tls.Pki;
import io.roster.server.tls.TlsFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SDK over TLS against an in-JVM server on a loopback port: trust, hostname verification,
 * mutual TLS, bad files, and a certificate rotated under 50 connected clients.
 */
class TlsEndToEndTest {

  @TempDir
  Path dir;

  private RosterServer server;
  private final List<RosterClient> clients = new ArrayList<>();
  private final ScheduledThreadPoolExecutor shared = new ScheduledThreadPoolExecutor(1);

  @AfterEach
  void stop() {
    clients.forEach(RosterClient::close);
    if (server != null) {
      server.close();
    }
    shared.shutdownNow();
  }

  private RosterServer start(TlsFiles tls) {
    server = RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).httpPort(-1)
        .warmUp(Duration.ZERO).shutdownGrace(Duration.ofMillis(500)).tls(tls).build());
    return server;
  }

  private RosterClient client(RosterClient.Builder builder) {
    RosterClient c = builder.build();
    clients.add(c);
    return c;
  }

  /** A client builder for the server at {@code host}, with a short drain and the shared scheduler. */
  private RosterClient.Builder builder(String host, String clientId) {
    return builder(host, clientId, TestServers.scaled(Duration.ofSeconds(3)));
  }

  /** The same, for a client whose calls are expected to fail: they wait {@code requestTimeout}. */
  private RosterClient.Builder builder(String host, String clientId, Duration requestTimeout) {
    return RosterClient.builder().serverAddresses(host + ":" + server.port()).clientId(clientId)
        .requestTimeout(requestTimeout).drainTimeout(Duration.ZERO).scheduler(shared);
  }

  /** The connection id of every session on the server, by client id. */
  private Map<String, String> sessionsByClient() {
    return server.sessions().all().stream().map(Session::info)
        .collect(Collectors.toMap(i -> i.clientId(), i -> i.connectionId()));
  }

  @Test
  void fiftySessionsStayWhileTheCertificateIsRotatedAndANewConnectionGetsTheNewOne() {
    TestPki pki = TestPki.in(dir);
    start(pki.files(false));
    List<RosterClient> fifty = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      RosterClient c = client(builder("127.0.0.1", "tls-" + i).tlsTrust(pki.caPem).pollEnabled(false));
      c.registerInstance("tls.fleet", "10.7.0." + i, 8080);
      fifty.add(c);
    }
    Map<String, String> before = sessionsByClient();
    assertThat(before).hasSize(50);

    Pki.Issued next = pki.rotateServer();
    await().atMost(TestServers.patience()).until(
        () -> TestPki.served("127.0.0.1", server.port(), pki.ca.certificate()).getSerialNumber(),
        serial -> serial.equals(next.certificate().getSerialNumber()));

    // A new client connects on the new certificate and sees the fleet.
    RosterClient fresh = client(builder("127.0.0.1", "tls-fresh").tlsTrust(pki.caPem));
    assertThat(fresh.getAllInstances("tls.fleet")).hasSize(50);
    // Every old session is still the one it was: same connection ids, no new hello, and each
    // still carries requests.
    for (int i = 0; i < 50; i++) {
      fifty.get(i).registerInstance("tls.fleet.after", "10.8.0." + i, 8080);
    }
    Map<String, String> after = sessionsByClient();
    after.remove("tls-fresh");
    assertThat(after).isEqualTo(before);
    assertThat(fresh.getAllInstances("tls.fleet.after")).hasSize(50);
  }

  @Test
  void hostnameVerificationRefusesACertificateThatDoesNotNameTheDialledHost() throws Exception {
    TestPki pki = TestPki.in(dir);
    Path cert = dir.resolve("elsewhere.crt");
    Path key = dir.resolve("elsewhere.key");
    pki.ca.issue("elsewhere", List.of("roster.example")).writePem(cert, key);
    start(new TlsFiles(cert, key, null));
    RosterClient wrongName = client(builder("127.0.0.1", "wrong-name", Duration.ofSeconds(1)).tlsTrust(pki.caPem));
    assertThatThrownBy(() -> wrongName.registerInstance("tls.names", "10.0.0.1", 80))
        .isInstanceOf(RosterException.class);
    assertThat(server.sessions().count()).isZero();
  }

  @Test
  void aPlaintextClientAndAClientTrustingAnotherCaAreRefused() {
    TestPki pki = TestPki.in(dir);
    start(pki.files(false));
    RosterClient plaintext = client(builder("127.0.0.1", "plain", Duration.ofSeconds(1)));
    assertThatThrownBy(() -> plaintext.registerInstance("tls.refused", "10.0.0.1", 80))
        .isInstanceOf(RosterException.class);
    TestPki other = TestPki.in(dir.resolve("other"));
    RosterClient stranger = client(builder("localhost", "stranger", Duration.ofSeconds(1)).tlsTrust(other.caPem));
    assertThatThrownBy(() -> stranger.registerInstance("tls.refused", "10.0.0.2", 80))
        .isInstanceOf(RosterException.class);
    assertThat(server.sessions().count()).isZero();
    // The name "localhost" is in the certificate too.
    client(builder("localhost", "trusting").tlsTrust(pki.caPem)).registerInstance("tls.refused", "10.0.0.3", 80);
    assertThat(server.sessions().count()).isEqualTo(1);
  }

  @Test
  void mutualTlsServesAClientWithACertificateOfTheClientCaOnly() throws Exception {
    Files.createDirectories(dir.resolve("other"));
    TestPki pki = TestPki.in(dir);
    TestPki other = TestPki.in(dir.resolve("other"));
    start(pki.files(true));
    Path[] member = pki.client(pki.ca, "member");
    Path[] stranger = pki.client(other.ca, "stranger");

    client(builder("127.0.0.1", "member").tlsTrust(pki.caPem).tlsClientCertificate(member[0], member[1]))
        .registerInstance("tls.mutual", "10.0.0.1", 80);
    RosterClient noCertificate = client(builder("127.0.0.1", "anonymous", Duration.ofSeconds(1)).tlsTrust(pki.caPem));
    assertThatThrownBy(() -> noCertificate.registerInstance("tls.mutual", "10.0.0.2", 80))
        .isInstanceOf(RosterException.class);
    RosterClient strangerClient = client(builder("127.0.0.1", "stranger", Duration.ofSeconds(1)).tlsTrust(pki.caPem)
        .tlsClientCertificate(stranger[0], stranger[1]));
    assertThatThrownBy(() -> strangerClient.registerInstance("tls.mutual", "10.0.0.3", 80))
        .isInstanceOf(RosterException.class);
    assertThat(sessionsByClient()).containsOnlyKeys("member");
  }

  @Test
  void badFilesAreRefusedAtBuildNamingTheSettingAndTheFile() throws Exception {
    Path missing = dir.resolve("missing.crt");
    assertThatThrownBy(() -> RosterClient.builder().serverAddresses("127.0.0.1:1").tlsTrust(missing).build())
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(RosterException.Code.INVALID_ARGUMENT);
          assertThat(e.field()).isEqualTo("tlsTrust");
          assertThat(e.getMessage()).contains(missing.toString()).contains("no such file");
        });
    TestPki pki = TestPki.in(dir);
    Path[] client = pki.client(pki.ca, "client");
    assertThatThrownBy(() -> RosterClient.builder().serverAddresses("127.0.0.1:1").tlsTrust(pki.caPem)
        .tlsClientCertificate(client[0], pki.serverKey).build())
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.field()).isEqualTo("tlsClientCertificate");
          assertThat(e.getMessage()).contains(pki.serverKey.toString()).contains("not the private key");
        });
    assertThatThrownBy(() -> RosterClient.builder().serverAddresses("127.0.0.1:1")
        .tlsClientCertificate(client[0], client[1]).build())
        .isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.getMessage()).startsWith("tlsClientCertificate: ").contains("without tlsTrust"));
  }
}
