package io.roster.it;

import io.roster.server.testing.TestTime;
import java.time.Duration;

/**
 * One factor scales every timeout of the integration tests: -Droster.test.timeFactor=2 on a slow
 * machine. It is {@link TestTime}'s, from the server's test jar; this class only shortens the calls.
 */
final class Timing {

  /** The factor as a JVM flag, for the child JVMs of the tests (providers). */
  static final String PROPERTY = TestTime.jvmFlag();

  private Timing() {}

  static Duration scaled(Duration d) {
    return TestTime.scaled(d);
  }

  static Duration seconds(long s) {
    return TestTime.seconds(s);
  }

  /** The shorter of the two: a scaled bound kept within a limit the code enforces. */
  static Duration atMost(Duration d, Duration limit) {
    return d.compareTo(limit) > 0 ? limit : d;
  }
}
