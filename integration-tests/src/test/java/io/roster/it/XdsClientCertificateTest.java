package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.TestPki;
import io.roster.server.testing.process.JavaProcess;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerLauncher;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * grpc-java's own xDS client, in a process of its own and configured only by its xDS bootstrap
 * file, against a server process with {@code --auth-file} and mutual TLS (docs/xds.md, decision
 * 80): the bootstrap's {@code "tls"} channel credentials name the CA and the client's certificate
 * files, and the certificate's SAN is the client's identity in the auth file. A client whose
 * identity may read the service round-robins over its registered backends; one whose identity
 * may not gets PERMISSION_DENIED on its ADS stream and its channel never resolves; one without a
 * certificate is refused at the handshake. The provider registers with the Java SDK by its own
 * certificate, without a token.
 */
class XdsClientCertificateTest {

  private static final String ORDERS = "spiffe://corp.example/ns/public/sa/orders-client";
  private static final String PROVIDER = "spiffe://corp.example/ns/public/sa/xds-provider";

  @TempDir
  Path dir;

  private final List<AutoCloseable> closing = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      closing.get(i).close();
    }
  }

  @Test
  void aClientConfiguredOnlyByItsBootstrapFileIsTheIdentityOfItsCertificate() throws Exception {
    TestPki pki = TestPki.in(dir);
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"))
        .certificate("xds-provider", PROVIDER, "write@public/xds-*")
        .certificate("orders-client", ORDERS, "read@public/xds-orders")
        .certificate("billing-client", "billing-client.corp.example", "read@public/billing");
    List<String> flags = new ArrayList<>(pki.flags(true));
    flags.addAll(List.of("--auth-file", auth.path().toString()));
    ServerProcess roster = ServerLauncher.forTests().withProbe(pki.credentials(true))
        .start("127.0.0.1", Ports.free(), flags.toArray(String[]::new));
    closing.add(roster);

    Path[] provider = pki.client(pki.ca, "xds-provider", List.of(PROVIDER));
    RosterClient sdk = RosterClient.builder().serverAddresses(roster.address()).clientName("xds-provider")
        .tlsTrust(pki.caPem).tlsClientCertificate(provider[0], provider[1])
        .drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(15)).build();
    closing.add(sdk);
    List<HealthBackend> backends = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      backends.add(backend());
      sdk.registerInstance("xds-orders", Instance.of("127.0.0.1", backends.get(i).port()));
    }

    Path[] orders = pki.client(pki.ca, "orders-client", List.of(ORDERS));
    XdsClient allowed = client(bootstrap(roster, "orders", pki.caPem, orders), 30);
    assertThat(allowed.exitCode()).as(allowed.output()).isZero();
    assertThat(allowed.output()).contains("OK 30");
    assertThat(backends).allSatisfy(b -> assertThat(b.calls().get()).as("round robin").isGreaterThanOrEqualTo(5));
    int served = backends.stream().mapToInt(b -> b.calls().get()).sum();

    Path[] billing = pki.client(pki.ca, "billing-client", List.of("billing-client.corp.example"));
    XdsClient denied = start(bootstrap(roster, "billing", pki.caPem, billing), 5);
    XdsClient anonymous = start(bootstrap(roster, "anonymous", pki.caPem), 5);

    await().atMost(Timing.seconds(40)).until(() -> denied.output().contains("PERMISSION_DENIED") || !denied.isAlive());
    assertThat(denied.output()).contains("\"billing-client\" lacks permission read on namespace \"public\", "
        + "service \"DEFAULT_GROUP@@xds-orders\"").doesNotContain("OK ");
    await().atMost(Timing.seconds(40)).until(() -> anonymous.output().contains("FAILED UNAVAILABLE")
        || !anonymous.isAlive());
    assertThat(anonymous.output()).contains("FAILED UNAVAILABLE").doesNotContain("OK ")
        .doesNotContain("PERMISSION_DENIED").doesNotContain("UNAUTHENTICATED");
    assertThat(backends.stream().mapToInt(b -> b.calls().get()).sum()).as("calls after the allowed client's")
        .isEqualTo(served);
  }

  /** A bootstrap file naming Roster with {@code "tls"} channel credentials: the CA, and the client's files if given. */
  private Path bootstrap(ServerProcess roster, String name, Path ca, Path... certificateAndKey) throws Exception {
    String config = "\"ca_certificate_file\": \"" + ca + "\"" + (certificateAndKey.length == 2
        ? ", \"certificate_file\": \"" + certificateAndKey[0] + "\", \"private_key_file\": \"" + certificateAndKey[1] + "\""
        : "");
    Path file = dir.resolve("bootstrap-" + name + ".json");
    Files.writeString(file, "{\"xds_servers\": [{\"server_uri\": \"" + roster.address() + "\",\n"
        + "  \"channel_creds\": [{\"type\": \"tls\", \"config\": {" + config + "}}],\n"
        + "  \"server_features\": [\"xds_v3\"]}],\n"
        + " \"node\": {\"id\": \"" + name + "-1\", \"locality\": {\"zone\": \"test\"}}}\n");
    return file;
  }

  /** {@link XdsClientMain} in a child JVM whose only configuration is {@code bootstrap}, run to its end. */
  private XdsClient client(Path bootstrap, int calls) throws InterruptedException {
    XdsClient c = start(bootstrap, calls);
    assertThat(c.process.waitFor(Timing.seconds(60).toMillis(), TimeUnit.MILLISECONDS)).as(c.output()).isTrue();
    return c;
  }

  private XdsClient start(Path bootstrap, int calls) {
    XdsClient c = new XdsClient(bootstrap, calls);
    closing.add(c);
    return c;
  }

  /** {@link XdsClientMain} in a child JVM; grpc-java reads the bootstrap file named by {@code io.grpc.xds.bootstrap}. */
  private static final class XdsClient extends JavaProcess {
    XdsClient(Path bootstrap, int calls) {
      super("xds-client", List.of("-Xmx64m", Timing.PROPERTY, "-Dio.grpc.xds.bootstrap=" + bootstrap,
          "-cp", testClasspath(), XdsClientMain.class.getName(), "xds:///xds-orders", Integer.toString(calls)));
    }

    int exitCode() {
      return process.exitValue();
    }
  }

  private HealthBackend backend() throws Exception {
    HealthBackend b = HealthBackend.start();
    closing.add(b);
    return b;
  }
}
