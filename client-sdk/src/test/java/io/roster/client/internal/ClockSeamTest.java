package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.ClockReads;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Time is injected: no class of the SDK reads a clock itself, except the seams that stand for it
 * ({@link Ticker} for timing decisions and the wall clock, {@link Deadline} for real-time waits).
 * A read that comes back anywhere else fails the build, naming the file and line.
 */
class ClockSeamTest {

  @Test
  void noSdkClassReadsAClockOutsideTheSeams() {
    assertThat(ClockReads.in(Path.of("src/main/java"), Set.of("io/roster/client/internal/Ticker.java",
        "io/roster/client/internal/Deadline.java"))).isEmpty();
  }
}
