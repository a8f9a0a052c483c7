package io.roster.client.internal;

import java.time.Duration;
import java.util.Random;

/**
 * Capped exponential back-off with full jitter: the n-th consecutive delay (0-based) is drawn
 * uniformly from {@code [0, min(max, initial * 2^n)]}. {@link #reset()} starts over, after a
 * success. Not thread-safe: the connection manager uses it in the client's
 * {@link SerialContext}.
 */
final class Backoff {

  private final long initialNanos;
  private final long maxNanos;
  private final Random random;
  private int attempt;

  Backoff(Duration initial, Duration max, Random random) {
    this.initialNanos = initial.toNanos();
    this.maxNanos = max.toNanos();
    this.random = random;
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
    long delay = (long) (random.nextDouble() * (ceiling + 1));
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
