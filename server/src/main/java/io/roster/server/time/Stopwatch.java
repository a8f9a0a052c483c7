package io.roster.server.time;

import java.time.Duration;

/**
 * Real time elapsed since a start, for reports (how long the start took): like {@link Deadline},
 * read on the system's monotonic clock whatever scheduler is injected. Immutable.
 */
public final class Stopwatch {

  private final long startNanos;

  private Stopwatch(long startNanos) {
    this.startNanos = startNanos;
  }

  /** A stopwatch started now. */
  public static Stopwatch start() {
    return new Stopwatch(System.nanoTime());
  }

  /** The real time since the start. */
  public Duration elapsed() {
    return Duration.ofNanos(System.nanoTime() - startNanos);
  }
}
