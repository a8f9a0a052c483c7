package io.roster.client.internal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A ticker and a scheduler on fake time: tasks run only when the test moves time forward
 * ({@link #forward}) or runs what is due ({@link #runDue}), on the test's thread. No sleeps.
 * Thread-safe; tasks run outside its lock.
 */
final class FakeClock implements Ticker {

  private final PriorityQueue<Task> tasks = new PriorityQueue<>(
      Comparator.comparingLong((Task t) -> t.due).thenComparingLong(t -> t.seq));
  private long now = 1_000_000_000L;
  private long seq;
  private final Scheduler scheduler = new Scheduler();
  /**
   * Waits until a task run by {@link #forward} has taken effect in the client: a timer's task is
   * added to the client's serial context without waiting when another thread (a caller of the
   * test) runs the queue.
   */
  volatile Runnable settle = () -> { };

  @Override
  public synchronized long nanoTime() {
    return now;
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** Runs every task due now, including tasks they schedule for now. */
  void runDue() {
    forward(Duration.ZERO);
  }

  /** Moves time forward, running each task at its due time, in order. */
  void forward(Duration d) {
    long target;
    synchronized (this) {
      target = now + d.toNanos();
    }
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.due > target) {
          now = target;
          return;
        }
        tasks.poll();
        now = Math.max(now, next.due);
      }
      next.run();
      settle.run();
    }
  }

  /** Delays from now of every pending task, soonest first. */
  synchronized List<Duration> pendingDelays() {
    List<Task> sorted = new ArrayList<>(tasks);
    sorted.sort(tasks.comparator());
    List<Duration> result = new ArrayList<>();
    for (Task t : sorted) {
      result.add(Duration.ofNanos(t.due - now));
    }
    return result;
  }

  synchronized int pendingCount() {
    return tasks.size();
  }

  private final class Task implements ScheduledFuture<Object> {
    final long due;
    final long seq;
    final Runnable body;
    boolean cancelled;
    boolean done;

    Task(long due, long seq, Runnable body) {
      this.due = due;
      this.seq = seq;
      this.body = body;
    }

    void run() {
      synchronized (FakeClock.this) {
        if (cancelled) {
          return;
        }
        done = true;
      }
      body.run();
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(due - nanoTime(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }

    @Override
    public boolean cancel(boolean mayInterrupt) {
      synchronized (FakeClock.this) {
        if (done || cancelled) {
          return false;
        }
        cancelled = true;
        tasks.remove(this);
        return true;
      }
    }

    @Override
    public boolean isCancelled() {
      synchronized (FakeClock.this) {
        return cancelled;
      }
    }

    @Override
    public boolean isDone() {
      synchronized (FakeClock.this) {
        return done || cancelled;
      }
    }

    @Override
    public Object get() {
      throw new UnsupportedOperationException();
    }

    @Override
    public Object get(long timeout, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }
  }

  private final class Scheduler extends AbstractExecutorService
      implements ScheduledExecutorService {

    private volatile boolean shutdown;

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      synchronized (FakeClock.this) {
        Task t = new Task(now + Math.max(0, unit.toNanos(delay)), seq++, command);
        tasks.add(t);
        return t;
      }
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable c, long i, long p, TimeUnit u) {
      throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable c, long i, long d, TimeUnit u) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void execute(Runnable command) {
      schedule(command, 0, TimeUnit.NANOSECONDS);
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }
  }
}
