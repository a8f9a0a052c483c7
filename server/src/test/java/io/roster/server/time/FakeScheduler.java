package io.roster.server.time;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A scheduler whose time moves only when a test says so. {@link #execute} tasks run on the
 * next {@link #runDue()} / {@link #advance}; everything runs on the test's thread.
 */
public final class FakeScheduler implements Scheduler {

  private final PriorityQueue<Task> tasks = new PriorityQueue<>();
  private long nanos = 1_000_000_000L;
  private long seq;

  @Override
  public synchronized long nanoTime() {
    return nanos;
  }

  @Override
  public synchronized long currentTimeMillis() {
    return 1_700_000_000_000L + nanos / 1_000_000;
  }

  @Override
  public synchronized void execute(Runnable task) {
    tasks.add(new Task(nanos, seq++, task));
  }

  @Override
  public synchronized Cancellable schedule(Runnable task, Duration delay) {
    Task t = new Task(nanos + delay.toNanos(), seq++, task);
    tasks.add(t);
    return () -> {
      synchronized (FakeScheduler.this) {
        tasks.remove(t);
      }
    };
  }

  /** Runs every task that is due now (including ones they schedule for now). */
  public void runDue() {
    advance(Duration.ZERO);
  }

  /** Moves time forward, running due tasks in time order. */
  public void advance(Duration d) {
    long target;
    synchronized (this) {
      target = nanos + d.toNanos();
    }
    while (true) {
      Task next;
      synchronized (this) {
        next = tasks.peek();
        if (next == null || next.at > target) {
          nanos = target;
          return;
        }
        tasks.poll();
        nanos = Math.max(nanos, next.at);
      }
      next.task.run();
    }
  }

  /** Tasks waiting, for assertions. */
  public synchronized List<Long> pendingDelaysNanos() {
    List<Long> l = new ArrayList<>();
    for (Task t : tasks) {
      l.add(t.at - nanos);
    }
    return l;
  }

  private record Task(long at, long seq, Runnable task) implements Comparable<Task> {
    @Override
    public int compareTo(Task o) {
      return at != o.at ? Long.compare(at, o.at) : Long.compare(seq, o.seq);
    }
  }
}
