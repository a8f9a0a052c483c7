package io.roster.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.testing.TestTime;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/operations.md "Logs": {@code --log-dir} writes roster.log there, and {@code
 * ROSTER_LOG_LEVEL} sets the level. A real server process each time (logging is per JVM), with
 * the production logback.xml (test classes left off the class path).
 */
class LogOptionsTest {

  @TempDir
  Path dir;

  private static String productionClassPath() {
    String cp = System.getProperty("surefire.test.class.path");
    if (cp == null || cp.isBlank()) {
      cp = System.getProperty("java.class.path");
    }
    return Arrays.stream(cp.split(File.pathSeparator))
        .filter(e -> !e.endsWith("test-classes") && !e.endsWith("test-classes/"))
        .collect(Collectors.joining(File.pathSeparator));
  }

  /** Starts a server until it is ready, stops it, and returns its roster.log. */
  private String run(Path logDir, String level) throws Exception {
    List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-cp", productionClassPath(), Main.class.getName(),
        "--host", "127.0.0.1", "--port", "0", "--log-dir", logDir.toString(), "--exit-when-ready");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(dir.resolve(logDir.getFileName() + ".out").toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("ROSTER_"));
    if (level != null) {
      pb.environment().put("ROSTER_LOG_LEVEL", level);
    }
    Process p = pb.start();
    try {
      assertThat(p.waitFor(TestTime.seconds(60).toMillis(), TimeUnit.MILLISECONDS)).as("exited").isTrue();
    } finally {
      p.destroyForcibly();
    }
    assertThat(p.exitValue()).as(Files.readString(dir.resolve(logDir.getFileName() + ".out"))).isZero();
    Path log = logDir.resolve("roster.log");
    assertThat(log).exists();
    return Files.readString(log);
  }

  @Test
  void logDirGetsRosterLogAtInfoAndRosterLogLevelChangesTheLevel() throws Exception {
    String info = run(dir.resolve("info"), null);
    assertThat(info).contains(" INFO ").contains("Roster 0.1.0 serving on 127.0.0.1:").contains("Stopped");

    String warn = run(dir.resolve("warn"), "WARN");
    assertThat(warn).as("no INFO line at WARN").doesNotContain(" INFO ").doesNotContain("serving on");
  }
}
