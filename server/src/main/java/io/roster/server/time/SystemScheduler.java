package io.roster.server.time;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The real clock over a small {@link ScheduledThreadPoolExecutor}. Closed by its creator. */
public final class SystemScheduler implements Scheduler, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(SystemScheduler.class);

  private final ScheduledThreadPoolExecutor executor;

  public SystemScheduler(String name, int threads) {
    AtomicInteger n = new AtomicInteger();
    executor = new ScheduledThreadPoolExecutor(threads, r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    executor.setRemoveOnCancelPolicy(true);
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public long currentTimeMillis() {
    return System.currentTimeMillis();
  }

  /** The system's monotonic clock, for what cannot be handed a scheduler (a logging filter made by Logback). */
  public static long systemNanoTime() {
    return System.nanoTime();
  }

  /** The system's wall clock in microseconds since the epoch (a registry's revisions, decision 2). */
  public static long wallClockMicros() {
    return java.time.temporal.ChronoUnit.MICROS.between(java.time.Instant.EPOCH, java.time.Instant.now());
  }

  @Override
  public void execute(Runnable task) {
    executor.execute(guarded(task));
  }

  @Override
  public Cancellable schedule(Runnable task, Duration delay) {
    ScheduledFuture<?> f = executor.schedule(guarded(task), delay.toNanos(), TimeUnit.NANOSECONDS);
    return () -> f.cancel(false);
  }

  private static Runnable guarded(Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        log.error("Scheduled task failed", e);
      }
    };
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
