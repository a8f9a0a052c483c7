package io.roster.server.naming;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Client-supplied strings cannot forge or flood log lines (decision 19). */
class LogTextTest {

  @Test
  void controlCharactersAreEscaped() {
    assertThat(LogText.of("evil\n12:00:00 INFO forged\r\t\u001b[31m"))
        .isEqualTo("evil\\n12:00:00 INFO forged\\r\\t\\u001b[31m");
    assertThat(LogText.of("plain-client-1")).isEqualTo("plain-client-1");
    assertThat(LogText.of(null)).isEmpty();
  }

  @Test
  void longTextIsCut() {
    assertThat(LogText.of("x".repeat(10_000))).isEqualTo("x".repeat(128) + "...(10000 chars)");
  }
}
