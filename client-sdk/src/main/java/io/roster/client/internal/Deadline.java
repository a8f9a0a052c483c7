package io.roster.client.internal;

import java.time.Duration;

/**
 * A point in real time that a blocking call waits until: a caller's thread parked on a lock or a
 * future waits real time whatever the client's {@link Ticker} says, so it is measured on the
 * system's monotonic clock here, the one place besides {@link Ticker#system()} that reads it.
 * Timing decisions (back-off, keepalive, holds, polls) use the injected ticker instead.
 * Immutable.
 */
final class Deadline {

  private final long atNanos;

  private Deadline(long atNanos) {
    this.atNanos = atNanos;
  }

  /** {@code wait} from now. */
  static Deadline after(Duration wait) {
    return new Deadline(System.nanoTime() + wait.toNanos());
  }

  /** What is left until the deadline; zero once it has passed. */
  Duration remaining() {
    return Duration.ofNanos(remainingNanos());
  }

  /** What is left until the deadline in nanoseconds; zero once it has passed. */
  long remainingNanos() {
    return Math.max(0, atNanos - System.nanoTime());
  }
}
