package io.roster.server.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestPki;
import io.roster.server.testing.TestTime;
import io.roster.server.testing.process.Ports;
import io.roster.server.tls.Pki;
import io.roster.server.tls.TlsFiles;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code roster_tls_certificate_expiry_seconds} and the auth file's reload metrics, read from
 * {@code GET /metrics} over real sockets (HTTPS when the server has TLS) of a server started with
 * throwaway certificates and a real auth file.
 */
class CertificateAndAuthMetricsTest {

  private static final double DAY = 86_400;

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  @Test
  void eachTlsPortReportsTheSecondsUntilItsCertificateExpiresAndAReloadMovesIt() throws Exception {
    Pki.Authority ca = Pki.newAuthority("roster-test-ca");
    Path caPem = dir.resolve("ca.crt");
    ca.writeCertificatePem(caPem);
    Path cert = dir.resolve("server.crt");
    Path key = dir.resolve("server.key");
    ca.issue("roster-server", List.of("127.0.0.1", "localhost"), Duration.ofDays(30)).writePem(cert, key);
    Path peerCert = dir.resolve("node1.crt");
    Path peerKey = dir.resolve("node1.key");
    ca.issue("node1", List.of("127.0.0.1"), Duration.ofDays(20)).writePem(peerCert, peerKey);
    Path data = Files.createDirectories(dir.resolve("data"));
    int peerPort = Ports.free();
    loopback.start(b -> b.httpPort(0).tls(new TlsFiles(cert, key, null)).dataDir(data).peerPort(peerPort)
        .members(List.of("127.0.0.1:" + peerPort)).peerTlsCert(peerCert).peerTlsKey(peerKey).peerTlsCa(caPem));
    HttpClient https = HttpClient.newBuilder().sslContext(TestPki.context(Pki.readCertificate(caPem), null, null))
        .connectTimeout(TestTime.seconds(10)).build();

    Map<String, Double> expiry = expiry(https);
    assertThat(expiry).containsOnlyKeys("client", "http", "peer");
    assertThat(expiry.get("client")).isCloseTo(days(30), within(DAY));
    assertThat(expiry.get("http")).isCloseTo(days(30), within(DAY));
    assertThat(expiry.get("peer")).isCloseTo(days(20), within(DAY));

    ca.issue("roster-server", List.of("127.0.0.1", "localhost"), Duration.ofDays(90)).writePem(cert, key);
    await().atMost(TestTime.seconds(15)).until(() -> expiry(https).get("client") > days(60));
    assertThat(expiry(https).get("http")).isCloseTo(days(90), within(DAY));
  }

  @Test
  void aServerWithoutTlsHasNoExpirySeries() throws Exception {
    loopback.start(b -> b.httpPort(0));
    String text = scrape(HttpClient.newHttpClient(), "http", null);
    assertThat(text).doesNotContain("roster_tls_certificate_expiry_seconds")
        .doesNotContain("roster_auth_reload_total");
  }

  @Test
  void theAuthFilesReloadsAreCountedByResultAndTheLastGoodOnesTimeKept() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String prometheus = auth.token("prometheus", "read@*");
    long before = System.currentTimeMillis();
    loopback.start(b -> b.httpPort(0).authFile(auth.path()));
    HttpClient http = HttpClient.newHttpClient();

    String text = scrape(http, "http", prometheus);
    assertThat(sample(text, "roster_auth_reload_total{result=\"ok\"}")).isZero();
    assertThat(sample(text, "roster_auth_reload_total{result=\"error\"}")).isZero();
    double loaded = sample(text, "roster_auth_reload_last_success_timestamp_seconds");
    assertThat(loaded).isBetween(before / 1000.0 - 1, System.currentTimeMillis() / 1000.0 + 1);

    auth.token("deployer", "write@prod");
    await().atMost(TestTime.seconds(15))
        .until(() -> sample(scrape(http, "http", prometheus), "roster_auth_reload_total{result=\"ok\"}") == 1);
    double reloaded = sample(scrape(http, "http", prometheus), "roster_auth_reload_last_success_timestamp_seconds");
    assertThat(reloaded).isGreaterThanOrEqualTo(loaded);

    Files.writeString(auth.path(), "{\"version\": 1, \"users\": [{\"name\": \"x\"}]}");
    // The old file stays in use: the same token still reads the metrics.
    await().atMost(TestTime.seconds(15))
        .until(() -> sample(scrape(http, "http", prometheus), "roster_auth_reload_total{result=\"error\"}") >= 1);
    text = scrape(http, "http", prometheus);
    assertThat(sample(text, "roster_auth_reload_total{result=\"ok\"}")).isEqualTo(1);
    assertThat(sample(text, "roster_auth_reload_last_success_timestamp_seconds")).isEqualTo(reloaded);
  }

  // --- helpers ---

  private static double days(int n) {
    return n * DAY;
  }

  private Map<String, Double> expiry(HttpClient https) throws Exception {
    Map<String, Double> byPort = new TreeMap<>();
    Matcher m = Pattern.compile("(?m)^roster_tls_certificate_expiry_seconds\\{port=\"(\\w+)\"\\} (\\S+)$")
        .matcher(scrape(https, "https", null));
    while (m.find()) {
      byPort.put(m.group(1), Double.parseDouble(m.group(2)));
    }
    return byPort;
  }

  private String scrape(HttpClient client, String scheme, @org.jspecify.annotations.Nullable String token)
      throws Exception {
    HttpRequest.Builder get = HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + loopback.server().httpPort()
        + "/metrics")).timeout(TestTime.seconds(10)).GET();
    if (token != null) {
      get.header("Authorization", "Bearer " + token);
    }
    var response = client.send(get.build(), BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    return response.body();
  }

  /** The value of the sample {@code series} (name and labels as written) in {@code text}; fails when absent. */
  private static double sample(String text, String series) {
    for (String line : text.lines().toList()) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).trim());
      }
    }
    throw new AssertionError("no sample " + series);
  }
}
