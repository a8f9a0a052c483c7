package io.roster.server.testing;

import io.roster.server.time.Scheduler;
import io.roster.server.time.SystemScheduler;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real scheduler (its own threads, the system's monotonic clock) whose wall clock a test can
 * move forward: what is judged by wall-clock time (an access token's expiry) passes at once,
 * while timers, leases and pushes run as on a real server. Close it after the server.
 */
public final class ShiftedClock implements Scheduler, AutoCloseable {

  private final SystemScheduler real = new SystemScheduler("shifted", 1);
  private final AtomicLong shiftMillis = new AtomicLong();

  /** Moves the wall clock forward by {@code d}. */
  public void shift(Duration d) {
    shiftMillis.addAndGet(d.toMillis());
  }

  @Override
  public long nanoTime() {
    return real.nanoTime();
  }

  @Override
  public long currentTimeMillis() {
    return real.currentTimeMillis() + shiftMillis.get();
  }

  @Override
  public void execute(Runnable task) {
    real.execute(task);
  }

  @Override
  public Cancellable schedule(Runnable task, Duration delay) {
    return real.schedule(task, delay);
  }

  @Override
  public void close() {
    real.close();
  }
}
