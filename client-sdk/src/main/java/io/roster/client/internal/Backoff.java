package io.roster.client.internal;

import java.time.Duration;
import java.util.Random;

/**
 * Capped exponential back-off with jitter: the n-th consecutive delay (0-based) is drawn
 * uniformly from {@code [floor * c, c]} where {@code c = min(max, initial * 2^n)}; a floor of 0 is
 * full jitter. {@link #reset()} starts over, after a success. Not thread-safe: the connection
 * manager uses it in the client's {@link SerialContext}.
 */
final class Backoff {

  private final long initialNanos;
  private final long maxNanos;
  private final Random random;
  private final double floor;
  private int attempt;

  /** Full jitter: each delay from 0 up to its ceiling. */
  Backoff(Duration initial, Duration max, Random random) {
    this(initial, max, random, 0);
  }

  /** Each delay from {@code floor} (0..1) times its ceiling up to the ceiling. */
  Backoff(Duration initial, Duration max, Random random, double floor) {
    this.initialNanos = initial.toNanos();
    this.maxNanos = max.toNanos();
    this.random = random;
    this.floor = floor;
  }

  /** The ceiling of the given 0-based attempt: {@code min(max, initial * 2^attempt)}. */
  long ceilingNanos(int n) {
    if (n >= 62 || initialNanos > (maxNanos >> Math.min(n, 62))) {
      return maxNanos;
    }
    return Math.min(maxNanos, initialNanos << n);
  }

  /** Returns the next delay and counts the attempt. */
  Duration next() {
    long ceiling = ceilingNanos(attempt);
    if (attempt < Integer.MAX_VALUE) {
      attempt++;
    }
    long least = (long) (floor * ceiling);
    long delay = least + (long) (random.nextDouble() * (ceiling - least + 1));
    return Duration.ofNanos(Math.min(delay, ceiling));
  }

  /** The first ceiling. */
  Duration initial() {
    return Duration.ofNanos(initialNanos);
  }

  /** How many delays were handed out since the last reset. */
  int attempts() {
    return attempt;
  }

  /** Starts over at the initial ceiling. */
  void reset() {
    attempt = 0;
  }
}
