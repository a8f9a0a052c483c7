package io.roster.server.time;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.ClockReads;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Time is injected: no class of the server reads a clock itself, except the seams that stand for
 * it ({@link SystemScheduler}, and {@link Deadline} and {@link Stopwatch} for real-time waits and
 * reports). A read that comes back anywhere else fails the build, naming the file and line.
 */
class ClockSeamTest {

  @Test
  void noServerClassReadsAClockOutsideTheSeams() {
    assertThat(ClockReads.in(Path.of("src/main/java"), Set.of("io/roster/server/time/SystemScheduler.java",
        "io/roster/server/time/Deadline.java", "io/roster/server/time/Stopwatch.java"))).isEmpty();
  }
}
