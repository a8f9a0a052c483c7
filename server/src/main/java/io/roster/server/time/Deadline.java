package io.roster.server.time;

import java.time.Duration;

/**
 * A point in real time that a blocking wait runs until: a thread parked on a lock, a future or a
 * server's termination waits real time whatever a test's scheduler says, so it is measured on
 * the system's monotonic clock here, the one place outside {@link SystemScheduler} that reads it.
 * Timing decisions (windows, timeouts, keepalive) use the injected {@link Scheduler} instead.
 * Immutable.
 */
public final class Deadline {

  private final long atNanos;

  private Deadline(long atNanos) {
    this.atNanos = atNanos;
  }

  /** {@code wait} from now. */
  public static Deadline after(Duration wait) {
    return new Deadline(System.nanoTime() + wait.toNanos());
  }

  /** What is left until the deadline; zero once it has passed. */
  public Duration remaining() {
    return Duration.ofNanos(remainingNanos());
  }

  /** What is left until the deadline in nanoseconds; zero once it has passed. */
  public long remainingNanos() {
    return Math.max(0, atNanos - System.nanoTime());
  }

  /** Whether the deadline has passed. */
  public boolean passed() {
    return remainingNanos() == 0;
  }
}
