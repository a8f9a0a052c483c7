package io.roster.server.time;

import java.time.Duration;

/**
 * Time and delayed work, injected everywhere a timing decision is made (coalescing window,
 * ack resend) so that tests can move time by hand. Implementations are thread-safe.
 */
public interface Scheduler {

  /** Monotonic nanoseconds, as {@link System#nanoTime()}. */
  long nanoTime();

  /** Wall-clock milliseconds since the epoch, as {@link System#currentTimeMillis()}. */
  long currentTimeMillis();

  /** Runs {@code task} as soon as possible on the scheduler's thread(s). */
  void execute(Runnable task);

  /** Runs {@code task} after {@code delay}; the returned handle cancels it. */
  Cancellable schedule(Runnable task, Duration delay);

  /** A scheduled task that can be cancelled. */
  interface Cancellable {
    void cancel();
  }
}
