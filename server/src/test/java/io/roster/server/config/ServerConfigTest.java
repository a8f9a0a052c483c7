package io.roster.server.config;

import java.util.Locale;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerConfigTest {

  @Test
  void defaultsMatchTheDesign() {
    ServerConfig c = ServerConfig.parse(new String[0], Map.of());
    assertThat(c.port()).isEqualTo(9848);
    assertThat(c.host()).isEqualTo("0.0.0.0");
    assertThat(c.dataDir()).isEqualTo(Path.of("data"));
    assertThat(c.sessions().keepaliveTime()).isEqualTo(Duration.ofSeconds(4));
    assertThat(c.sessions().keepaliveTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.sessions().pushWindow()).isEqualTo(Duration.ofMillis(20));
    assertThat(c.sessions().pushAckTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.limits().maxInstancesPerService()).isEqualTo(20_000);
    assertThat(c.limits().maxServiceBytes()).isEqualTo(3L * 1024 * 1024);
  }

  @Test
  void serviceLimitsFromFlagsAndEnvironment() {
    ServerConfig c = ServerConfig.parse(new String[] {"--max-service-bytes", "512k"},
        Map.of("ROSTER_MAX_INSTANCES_PER_SERVICE", "100", "ROSTER_MAX_SERVICE_BYTES", "1m"));
    assertThat(c.limits().maxInstancesPerService()).isEqualTo(100);
    assertThat(c.limits().maxServiceBytes()).isEqualTo(512 * 1024);
    assertThat(ServerConfig.formatSize(ServerConfig.defaults().limits().maxServiceBytes())).isEqualTo("3m");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--max-service-bytes", "16m"}, Map.of()))
        .hasMessage("max-service-bytes: 16777216 (expected: 1024..15728640, i.e. 1k..15m)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--max-service-bytes", "lots"}, Map.of()))
        .hasMessage("--max-service-bytes: \"lots\" (expected: a size in bytes, 1k..15m (suffixes k, m: 3m))");
  }

  @Test
  void theDnsRateLimitIsOffByDefaultAndNeverNegative() {
    assertThat(ServerConfig.defaults().dns().dnsRateLimit()).isZero();
    assertThat(ServerConfig.parse(new String[] {"--dns-rate-limit", "100"}, Map.of()).dns().dnsRateLimit()).isEqualTo(100);
    assertThat(ServerConfig.parse(new String[0], Map.of("ROSTER_DNS_RATE_LIMIT", "20")).dns().dnsRateLimit()).isEqualTo(20);
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--dns-rate-limit", "-1"}, Map.of()))
        .hasMessage("dns-rate-limit: -1 (expected: >= 0, 0 = off)");
  }

  @Test
  void flagsWinOverEnvironment() {
    ServerConfig c = ServerConfig.parse(new String[] {"--port", "9000", "--push-window=200ms"},
        Map.of("ROSTER_PORT", "7000", "ROSTER_KEEPALIVE_TIME", "2s", "ROSTER_HOST", "127.0.0.1"));
    assertThat(c.port()).isEqualTo(9000);
    assertThat(c.host()).isEqualTo("127.0.0.1");
    assertThat(c.sessions().keepaliveTime()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.sessions().pushWindow()).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void tlsFilesFromFlagsAndEnvironmentComeInPairs() {
    assertThat(ServerConfig.defaults().tls().files()).isNull();
    ServerConfig c = ServerConfig.parse(new String[] {"--tls-cert", "/etc/roster/tls.crt"},
        Map.of("ROSTER_TLS_KEY", "/etc/roster/tls.key", "ROSTER_TLS_CLIENT_CA", "/etc/roster/clients.crt"));
    assertThat(c.tls().files()).isEqualTo(new io.roster.server.tls.TlsFiles(Path.of("/etc/roster/tls.crt"),
        Path.of("/etc/roster/tls.key"), Path.of("/etc/roster/clients.crt")));
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--tls-key", "/k.pem"}, Map.of()))
        .hasMessage("tls-key: /k.pem given without --tls-cert (expected: both, or neither)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--tls-cert", "/c.pem"}, Map.of()))
        .hasMessage("tls-cert: /c.pem given without --tls-key (expected: both, or neither)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--tls-client-ca", "/ca.pem"}, Map.of()))
        .hasMessageStartingWith("tls-client-ca: /ca.pem given without --tls-cert and --tls-key");
  }

  @Test
  void durations() {
    assertThat(ServerConfig.parseDuration("5s")).isEqualTo(Duration.ofSeconds(5));
    assertThat(ServerConfig.parseDuration("1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(ServerConfig.parseDuration("200ms")).isEqualTo(Duration.ofMillis(200));
    assertThat(ServerConfig.parseDuration("2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(ServerConfig.parseDuration("250")).isEqualTo(Duration.ofMillis(250));
    assertThat(ServerConfig.formatDuration(Duration.ofMillis(20))).isEqualTo("20ms");
    assertThat(ServerConfig.formatDuration(Duration.ofSeconds(5))).isEqualTo("5s");
  }

  @Test
  void badInputNamesTheSettingTheValueAndTheExpectation() {
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--keepalive-time", "soon"}, Map.of()))
        .hasMessage("--keepalive-time: \"soon\" (expected: a duration like 5s)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--port", "70000"}, Map.of()))
        .hasMessage("port: 70000 (expected: 0..65535, 0 = any free port)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--nope", "1"}, Map.of()))
        .hasMessage("unknown option: --nope (see --help)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--port"}, Map.of()))
        .hasMessage("--port: missing value");
    assertThatThrownBy(() -> ServerConfig.parse(new String[0], Map.of("ROSTER_PUSH_ACK_TIMEOUT", "0s")))
        .hasMessage("push-ack-timeout: 0s (expected: a positive duration)");
  }

  /** A member is not recorded down (nor cut off) faster than an election can replace a leader (decision 87). */
  @Test
  void memberDownAfterOutlastsTheLongestElectionTimeout() {
    assertThat(ServerConfig.defaults().cluster().memberDownAfter()).isGreaterThan(ServerConfig.ELECTION_TIMEOUT_MAX);
    assertThat(ServerConfig.parse(new String[] {"--member-down-after", "1500ms"}, Map.of()).cluster().memberDownAfter())
        .isEqualTo(Duration.ofMillis(1500));
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--member-down-after", "1400ms"}, Map.of()))
        .hasMessage("member-down-after: 1400ms (expected: more than 1400ms, the longest election timeout: a member is not "
            + "recorded down, nor cut off, before an election could have replaced its leader)");
  }

  @Test
  void warmUpDefaultsToThirtySecondsEndedByFiveQuietOnesAndIsBounded() {
    assertThat(ServerConfig.defaults().sessions().warmUp()).isEqualTo(Duration.ofSeconds(30));
    assertThat(ServerConfig.defaults().sessions().warmUpQuiet()).isEqualTo(Duration.ofSeconds(5));
    assertThat(ServerConfig.parse(new String[0], Map.of("ROSTER_WARM_UP_QUIET", "0s")).sessions().warmUpQuiet()).isZero();
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--warm-up-quiet", "90s"}, Map.of()))
        .hasMessage("warm-up-quiet: 90s (expected: 0s..60s)");
    assertThat(ServerConfig.parse(new String[0], Map.of("ROSTER_WARM_UP", "8s")).sessions().warmUp())
        .isEqualTo(Duration.ofSeconds(8));
    assertThat(ServerConfig.parse(new String[] {"--warm-up", "0s"}, Map.of("ROSTER_WARM_UP", "8s")).sessions().warmUp())
        .isZero();
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--warm-up", "2m"}, Map.of()))
        .hasMessage("warm-up: 120s (expected: 0s..60s)");
  }

  @Test
  void balanceSettleDefaultsToTenSecondsAndIsAtLeastOne() {
    assertThat(ServerConfig.defaults().cluster().balanceSettle()).isEqualTo(Duration.ofSeconds(10));
    assertThat(ServerConfig.parse(new String[] {"--balance-settle", "2s"}, Map.of()).cluster().balanceSettle())
        .isEqualTo(Duration.ofSeconds(2));
    assertThatThrownBy(() -> ServerConfig.parse(new String[0], Map.of("ROSTER_BALANCE_SETTLE", "500ms")))
        .hasMessageStartingWith("balance-settle: 500ms (expected: at least 1s");
  }

  @Test
  void aClusterMemberNeedsPeerTlsFilesOrPeerTlsOffSaidOutright() {
    String[] member = {"--members", "roster1:9849,roster2:9849"};
    assertThatThrownBy(() -> ServerConfig.parse(member, Map.of()))
        .hasMessageStartingWith("members: a cluster member's peer port takes only other members, by mutual TLS: "
            + "give --peer-tls-cert, --peer-tls-key and --peer-tls-ca")
        .hasMessageContaining("or --peer-tls off");
    ServerConfig off = ServerConfig.parse(new String[] {"--members", "roster1:9849", "--peer-tls", "off"}, Map.of());
    assertThat(off.cluster().peerTls()).isFalse();
    ServerConfig on = ServerConfig.parse(member, Map.of("ROSTER_PEER_TLS_CERT", "/pki/roster1.crt",
        "ROSTER_PEER_TLS_KEY", "/pki/roster1.key", "ROSTER_PEER_TLS_CA", "/pki/ca.crt"));
    assertThat(on.cluster().peerTls()).isTrue();
    assertThat(on.cluster().peerTlsCert()).isEqualTo(Path.of("/pki/roster1.crt"));
    assertThat(on.cluster().peerTlsKey()).isEqualTo(Path.of("/pki/roster1.key"));
    assertThat(on.cluster().peerTlsCa()).isEqualTo(Path.of("/pki/ca.crt"));
    // a standalone server is unaffected
    assertThat(ServerConfig.defaults().cluster().peerTls()).isTrue();
    assertThat(ServerConfig.defaults().cluster().peerTlsCert()).isNull();
  }

  @Test
  void partialPeerTlsMaterialNamesWhatIsMissing() {
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--members", "roster1:9849", "--peer-tls-cert",
        "/pki/roster1.crt"}, Map.of()))
        .hasMessage("peer-tls-key: missing, while --peer-tls-cert is given (expected: --peer-tls-cert, "
            + "--peer-tls-key and --peer-tls-ca together, or --peer-tls off)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--members", "roster1:9849", "--peer-tls-cert",
        "/pki/roster1.crt", "--peer-tls-key", "/pki/roster1.key"}, Map.of()))
        .hasMessage("peer-tls-ca: missing, while --peer-tls-cert and --peer-tls-key are given (expected: "
            + "--peer-tls-cert, --peer-tls-key and --peer-tls-ca together, or --peer-tls off)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--peer-tls-ca", "/pki/ca.crt"}, Map.of()))
        .hasMessage("peer-tls-ca: /pki/ca.crt given, but a standalone server (no --members) has no peer port "
            + "(expected: peer TLS files only with --members)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--peer-tls", "maybe"}, Map.of()))
        .hasMessage("--peer-tls: \"maybe\" (expected: on or off)");
  }

  @Test
  void theHttpPortIsThePortMinus1000ByDefaultAndCanBeSetOrTurnedOff() {
    assertThat(ServerConfig.defaults().resolvedHttpPort()).isEqualTo(8848);
    assertThat(ServerConfig.parse(new String[] {"--port", "9000"}, Map.of()).resolvedHttpPort()).isEqualTo(8000);
    assertThat(ServerConfig.parse(new String[] {"--port", "0"}, Map.of()).resolvedHttpPort()).isZero();
    assertThat(ServerConfig.parse(new String[] {"--http-port", "18848"}, Map.of()).resolvedHttpPort())
        .isEqualTo(18848);
    assertThat(ServerConfig.parse(new String[0], Map.of("ROSTER_HTTP_PORT", "off")).resolvedHttpPort())
        .isEqualTo(-1);
    assertThat(ServerConfig.parse(new String[] {"--http-port", "-1"}, Map.of()).resolvedHttpPort())
        .isEqualTo(-1);
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--http-port", "70000"}, Map.of()))
        .hasMessage("--http-port: \"70000\" (expected: auto, off or 0..65535)");
    assertThatThrownBy(() -> ServerConfig.parse(new String[] {"--port", "900"}, Map.of()))
        .hasMessage("http-port: auto needs --port above 1000 (it is --port - 1000), but --port is 900 "
            + "(expected: a port, or off)");
    assertThat(ServerConfig.parse(new String[] {"--port", "900", "--http-port", "off"}, Map.of()).port())
        .isEqualTo(900);
  }

  @Test
  void usageListsEveryOptionWithItsEnvironmentVariable() {
    String usage = ServerConfig.usage();
    for (String name : ServerConfig.optionNames()) {
      assertThat(usage).contains("--" + name).contains("ROSTER_" + name.toUpperCase(Locale.ROOT).replace('-', '_'));
    }
  }

  /** The --help text, byte for byte: every flag's name, variable, default and help, in order. */
  @Test
  void usageIsTheGoldenText() throws Exception {
    String golden;
    try (var in = ServerConfigTest.class.getResourceAsStream("/golden/usage.txt")) {
      golden = new String(java.util.Objects.requireNonNull(in, "golden/usage.txt").readAllBytes(),
          java.nio.charset.StandardCharsets.UTF_8);
    }
    assertThat(ServerConfig.usage().replace(System.lineSeparator(), "\n")).isEqualTo(golden);
  }

  @Test
  void theReadmeTableListsEveryOption() throws Exception {
    String readme = java.nio.file.Files.readString(java.nio.file.Path.of("..", "README.md"));
    for (String name : ServerConfig.optionNames()) {
      assertThat(readme).as("README.md's configuration table").contains("| `--" + name + "` | `ROSTER_"
          + name.toUpperCase(Locale.ROOT).replace('-', '_') + "` |");
    }
  }
}
