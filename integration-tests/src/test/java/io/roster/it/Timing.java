package io.roster.it;

import java.time.Duration;

/** One factor scales every timeout of the integration tests: -Droster.test.timeFactor=2 on a slow machine. */
final class Timing {

  static final double FACTOR = Double.parseDouble(System.getProperty("roster.test.timeFactor", "1"));

  /** The factor as a JVM flag, for the child JVMs of the tests (providers). */
  static final String PROPERTY = "-Droster.test.timeFactor=" + FACTOR;

  private Timing() {}

  static Duration scaled(Duration d) {
    return Duration.ofMillis(Math.round(d.toMillis() * FACTOR));
  }

  static Duration seconds(long s) {
    return scaled(Duration.ofSeconds(s));
  }

  /** The shorter of the two: a scaled bound kept within a limit the code enforces. */
  static Duration atMost(Duration d, Duration limit) {
    return d.compareTo(limit) > 0 ? limit : d;
  }
}
