package io.roster.it;

import java.time.Duration;

/** One factor scales every timeout of the integration tests: -Droster.test.timeFactor=2 on a slow machine. */
final class Timing {

  static final double FACTOR = Double.parseDouble(System.getProperty("roster.test.timeFactor", "1"));

  private Timing() {}

  static Duration scaled(Duration d) {
    return Duration.ofMillis(Math.round(d.toMillis() * FACTOR));
  }

  static Duration seconds(long s) {
    return scaled(Duration.ofSeconds(s));
  }
}
