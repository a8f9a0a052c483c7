package io.roster.server.testing;

import java.time.Duration;

/**
 * One factor scales every real-time bound of the tests: {@code -Droster.test.timeFactor=2} (or
 * 1.5) on a slow or busy machine. Fake-clock tests need no scaling; anything that waits on real
 * sockets, threads or timers goes through here. The one place the factor is read: the SDK's
 * and the integration tests' helpers (through the server's test jar) delegate here.
 */
public final class TestTime {

  /** The system property that sets the factor. */
  public static final String PROPERTY = "roster.test.timeFactor";

  /** The factor, from {@code roster.test.timeFactor} (default 1; fractions allowed). */
  public static final double FACTOR = Double.parseDouble(System.getProperty(PROPERTY, "1"));

  private TestTime() {}

  /** {@code d} times the factor. */
  public static Duration scaled(Duration d) {
    return Duration.ofMillis(Math.round(d.toMillis() * FACTOR));
  }

  /** {@code ms} milliseconds times the factor. */
  public static Duration millis(long ms) {
    return scaled(Duration.ofMillis(ms));
  }

  /** {@code s} seconds times the factor. */
  public static Duration seconds(long s) {
    return scaled(Duration.ofSeconds(s));
  }

  /** The factor as a JVM flag, for child JVMs started by a test: {@code -Droster.test.timeFactor=..}. */
  public static String jvmFlag() {
    return "-D" + PROPERTY + "=" + FACTOR;
  }
}
