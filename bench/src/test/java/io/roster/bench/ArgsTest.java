package io.roster.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class ArgsTest {

  @Test
  void defaultsAreTheIssueSizesWithALocalRosterServer() {
    Args a = Args.parse();
    assertThat(a.driver).isEqualTo("roster");
    assertThat(a.localServer()).isTrue();
    assertThat(a.workloads).containsExactlyElementsOf(Args.ALL_WORKLOADS);
    assertThat(a.size("w1-clients")).isEqualTo(1000);
    assertThat(a.size("w2-clients")).isEqualTo(100);
    assertThat(a.size("w2-instances")).isEqualTo(100);
    assertThat(a.size("w2-services")).isEqualTo(1000);
    assertThat(a.size("w3-callers")).isEqualTo(32);
    assertThat(a.size("w4-changes")).isEqualTo(200);
    assertThat(a.size("w5-subscribers")).isEqualTo(1000);
    assertThat(a.size("w6-trials")).isEqualTo(20);
    assertThat(a.size("w7-trials")).isEqualTo(5);
    assertThat(a.size("w8-clients")).isEqualTo(10000);
  }

  @Test
  void theClusterWorkloadsRunOnlyWithTheirOwnRosterServers() {
    assertThat(Args.parse("--workloads", "w10,w11,w12").workloads).containsExactly("w10", "w11", "w12");
    assertThat(Args.parse("--target", "127.0.0.1:9848").workloads).doesNotContainAnyElementsOf(Args.CLUSTER_WORKLOADS);
    assertThatThrownBy(() -> Args.parse("--target", "127.0.0.1:9848", "--workloads", "w2,w11"))
        .hasMessageContaining("w11 starts its own Roster servers");
    assertThatThrownBy(() -> Args.parse("--driver", "nacos", "--target", "h:8848", "--workloads", "w10"))
        .hasMessageContaining("--driver roster");
    // their peer ports speak mutual TLS unless --peer-tls off
    assertThat(Args.parse("--workloads", "w10").peerTls).isTrue();
    assertThat(Args.parse("--workloads", "w10", "--peer-tls", "off").peerTls).isFalse();
    assertThatThrownBy(() -> Args.parse("--peer-tls", "maybe")).hasMessage("--peer-tls: \"maybe\" (expected: on or off)");
  }

  @Test
  void nacosFirstRunsOnlyWhenNamed() {
    assertThat(Args.parse().workloads).doesNotContain("nacosfirst");
    assertThat(Args.parse("--workloads", "nacosfirst").workloads).containsExactly("nacosfirst");
  }

  @Test
  void electionsRunsOnlyWhenNamedAndTakesABaselineJarThatExists() throws Exception {
    assertThat(Args.parse().workloads).doesNotContain("elections");
    assertThat(Args.parse("--workloads", "elections").workloads).containsExactly("elections");
    assertThat(Args.parse("--workloads", "elections").baselineJar).isNull();
    java.nio.file.Path jar = java.nio.file.Files.createTempFile("baseline", ".jar");
    try {
      assertThat(Args.parse("--workloads", "elections", "--baseline-jar", jar.toString()).baselineJar)
          .isEqualTo(jar.toString());
    } finally {
      java.nio.file.Files.delete(jar);
    }
    assertThatThrownBy(() -> Args.parse("--workloads", "elections", "--baseline-jar", "/nowhere/old.jar"))
        .hasMessage("--baseline-jar: \"/nowhere/old.jar\" (expected: a server jar file)");
    assertThatThrownBy(() -> Args.parse("--target", "127.0.0.1:9848", "--workloads", "elections"))
        .hasMessageContaining("elections starts its own Roster servers");
    assertThatThrownBy(() -> Args.parse("--tls", "--workloads", "elections"))
        .hasMessageContaining("elections starts its servers without TLS or auth");
    assertThat(Args.parse("--elections-hog", "0").size("elections-hog")).as("0: no hog").isZero();
    assertThat(Args.parse("--quick").size("elections-minutes")).isEqualTo(1);
  }

  @Test
  void theServerGetsTheShippedFlagsOfServerJvmOptionsPlusAHeapCap() throws Exception {
    String shipped = java.nio.file.Files.readString(java.nio.file.Path.of("../server/jvm.options")).trim();
    Args a = Args.parse("--server-jar", "../server/target/roster-server.jar");
    assertThat(a.serverJvm).containsExactlyElementsOf(java.util.List.of((shipped + " -Xmx1g").split(" ")));
    assertThat(a.serverJvm).contains("-XX:MaxHeapFreeRatio=30");
    assertThat(Args.parse("--server-jvm", "-Xmx64m").serverJvm).containsExactly("-Xmx64m");
  }

  @Test
  void tlsPutsTheStartedServerOnTlsForTheSingleServerWorkloadsOnly() {
    Args a = Args.parse("--tls");
    assertThat(a.tls).isTrue();
    assertThat(a.workloads).containsExactly("w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9");
    assertThat(Args.parse("--tls", "--workloads", "w3,w4").workloads).containsExactly("w3", "w4");
    assertThat(Args.parse().tls).isFalse();
    assertThatThrownBy(() -> Args.parse("--tls", "--workloads", "w4,w10"))
        .hasMessageContaining("w10 starts its servers without TLS or auth");
    assertThatThrownBy(() -> Args.parse("--tls", "--target", "127.0.0.1:9848")).hasMessageContaining("--tls:");
  }

  @Test
  void authGivesTheStartedServerAnAuthFileForTheSingleServerWorkloadsOnly() {
    Args a = Args.parse("--auth", "--tls", "--workloads", "w3,w4");
    assertThat(a.auth).isTrue();
    assertThat(a.tls).isTrue();
    assertThat(Args.parse().auth).isFalse();
    assertThatThrownBy(() -> Args.parse("--auth", "--workloads", "w11")).hasMessageContaining("(expected: w1..w9 with --auth)");
    assertThatThrownBy(() -> Args.parse("--auth", "--target", "127.0.0.1:9848")).hasMessageContaining("--auth:");
    assertThat(Args.parse().size("w4-flood")).as("no flood unless asked").isZero();
    assertThat(Args.parse("--auth", "--w4-flood", "8").size("w4-flood")).isEqualTo(8);
    assertThatThrownBy(() -> Args.parse("--w4-flood", "-1")).hasMessage("--w4-flood: -1 (expected: 0 (none) or more)");
  }

  @Test
  void quickShrinksSizesButAnExplicitFlagWins() {
    Args a = Args.parse("--quick", "--w1-clients=50");
    assertThat(a.quick).isTrue();
    assertThat(a.size("w1-clients")).isEqualTo(50);
    assertThat(a.size("w8-clients")).isEqualTo(1000);
  }

  @Test
  void targetDropsStartupAndSelectsWorkloads() {
    Args a = Args.parse("--target", "10.0.0.1:9848", "--workloads", "startup,W4, w6");
    assertThat(a.localServer()).isFalse();
    assertThat(a.workloads).containsExactly("w4", "w6");
  }

  @Test
  void serverJvmFlagsAreSplitOnSpaces() {
    assertThat(Args.parse("--server-jvm", "-XX:+UseSerialGC  -Xmx256m").serverJvm)
        .isEqualTo(List.of("-XX:+UseSerialGC", "-Xmx256m"));
  }

  @Test
  void nacosNeedsATarget() {
    assertThatThrownBy(() -> Args.parse("--driver", "nacos"))
        .hasMessageContaining("--driver nacos needs --target host:8848");
    assertThat(Args.parse("--driver", "nacos", "--target", "nacos:8848").driver).isEqualTo("nacos");
  }

  @Test
  void errorsNameTheFlagTheValueAndWhatWasExpected() {
    assertThatThrownBy(() -> Args.parse("--driver", "eureka"))
        .hasMessage("--driver: \"eureka\" (expected: roster or nacos)");
    assertThatThrownBy(() -> Args.parse("--w1-clients", "0"))
        .hasMessage("--w1-clients: 0 (expected: a positive integer)");
    assertThatThrownBy(() -> Args.parse("--w1-clients", "many"))
        .hasMessage("--w1-clients: \"many\" (expected: a positive integer)");
    assertThatThrownBy(() -> Args.parse("--target", "nohost"))
        .hasMessage("--target: \"nohost\" (expected: host:port)");
    assertThatThrownBy(() -> Args.parse("--workloads", "w99"))
        .hasMessageStartingWith("--workloads: \"w99\" (expected: all or a comma-separated subset of startup,first,warmkill,w1");
    assertThatThrownBy(() -> Args.parse("--bogus", "1")).hasMessage("--bogus: unknown flag (see --help)");
    assertThatThrownBy(() -> Args.parse("--w1-clients")).hasMessage("--w1-clients: no value (expected: --w1-clients VALUE)");
    assertThatThrownBy(() -> Args.parse("w1")).hasMessageStartingWith("w1: not a flag");
  }

  @Test
  void helpListsEverySize() {
    assertThat(Args.help()).contains("--w8-clients", "10000", "--roster-mass", "--target", "--peer-tls");
  }
}
