package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder takes each setting once: a second call is a mistake that would hide the first. */
class BuilderTest {

  @Test
  void aSettingMadeTwiceIsRefusedNamingItAndItsValue() {
    RosterClient.Builder b = RosterClient.builder().serverAddresses("10.0.0.1:9848");
    assertThatThrownBy(() -> b.serverAddresses("10.0.0.2:9848"))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("serverAddresses: already set to 10.0.0.1:9848 (a builder takes each setting once)");
    b.keepAlive(Duration.ofSeconds(2), Duration.ofSeconds(3));
    assertThatThrownBy(() -> b.keepAlive(Duration.ofSeconds(1), Duration.ofSeconds(1)))
        .hasMessage("keepAlive: already set to PT2S / PT3S (a builder takes each setting once)");
  }

  @Test
  void aSettingThatWasRefusedMayBeMadeAgain() {
    RosterClient.Builder b = RosterClient.builder();
    assertThatThrownBy(() -> b.clientName(null)).isInstanceOf(NullPointerException.class);
    assertThat(b.clientName("orders")).isSameAs(b);
  }
}
