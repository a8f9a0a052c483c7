package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.client.RosterException;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ServerAddressTest {

  @Test
  void parsesHostsPortsIpv6AndDefaults() {
    assertThat(ServerAddress.parseList(" a:1, b ,[::1]:9,a:1,::2"))
        .containsExactly(new ServerAddress("a", 1), new ServerAddress("b", 9848),
            new ServerAddress("::1", 9), new ServerAddress("::2", 9848));
    assertThat(new ServerAddress("::1", 9).toString()).isEqualTo("[::1]:9");
  }

  @Test
  void rejectsWhatIsNotAnAddress() {
    assertThatThrownBy(() -> ServerAddress.parseList("a:0"))
        .isInstanceOf(RosterException.class)
        .hasMessage("serverAddresses: 'a:0' (expected: host:port[,host:port...] with port"
            + " 1..65535)");
    assertThatThrownBy(() -> ServerAddress.parseList("a:x")).isInstanceOf(RosterException.class);
    assertThatThrownBy(() -> ServerAddress.parseList(" , ")).isInstanceOf(RosterException.class);
    assertThatThrownBy(() -> ServerAddress.parseList("[::1")).isInstanceOf(RosterException.class);
  }

  @Test
  void optionsNameTheBadSetting() {
    assertThatThrownBy(() -> new ClientOptions("a:1", "public", "id", "n", Map.of(),
        Duration.ZERO, Duration.ofSeconds(3), Duration.ofSeconds(10), Duration.ofSeconds(60), true,
        Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(5),
        Duration.ofSeconds(5), Duration.ZERO, Duration.ZERO, false, null, null, null, null, () -> ""))
        .isInstanceOf(RosterException.class)
        .hasMessage("requestTimeout: PT0S (expected: a positive duration)");
    assertThatThrownBy(() -> new ClientOptions("a:1", "public", "id", "n", Map.of(),
        Duration.ofSeconds(3), Duration.ofSeconds(3), Duration.ofSeconds(10), Duration.ofSeconds(5), true,
        Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(5),
        Duration.ofSeconds(5), Duration.ZERO, Duration.ZERO, false, null, null, null, null, () -> ""))
        .hasMessage("pollMaxBackoff: PT5S (expected: >= pollInterval PT10S)");
  }
}
