package io.roster.client.internal;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in the order they were added, on a delegate executor.
 *
 * <p>Adding and running are split so callers can add under their own lock (which fixes the
 * order) and start the drain after releasing it ({@link #drain()}): a direct delegate executor
 * then never runs a task under the caller's lock. Thread-safe.
 */
final class SerialExecutor {

  private static final Logger log = LoggerFactory.getLogger(SerialExecutor.class);

  private final Executor delegate;
  private final Runnable onDropped;
  private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean running = new AtomicBoolean();

  SerialExecutor(Executor delegate) {
    this(delegate, () -> { });
  }

  /** @param onDropped runs after queued tasks were dropped (rejected by the delegate, or cleared) */
  SerialExecutor(Executor delegate, Runnable onDropped) {
    this.delegate = delegate;
    this.onDropped = onDropped;
  }

  /** Queues a task; it runs after every task queued before it. Call {@link #drain()} next. */
  void add(Runnable task) {
    queue.add(task);
  }

  /** Starts running queued tasks on the delegate unless a run is already going on. */
  void drain() {
    if (queue.isEmpty() || !running.compareAndSet(false, true)) {
      return;
    }
    try {
      delegate.execute(this::runQueued);
    } catch (RejectedExecutionException e) {
      running.set(false);
      queue.clear();
      onDropped.run();
      log.warn("The listener executor rejected a task; queued events are dropped and delivery resumes with the next change");
    }
  }

  /** Drops every queued task that has not started yet. */
  void clear() {
    queue.clear();
    onDropped.run();
  }

  private void runQueued() {
    try {
      Runnable task;
      while ((task = queue.poll()) != null) {
        try {
          task.run();
        } catch (RuntimeException e) {
          log.warn("A queued task failed", e);
        }
      }
    } finally {
      running.set(false);
    }
    drain(); // a task added after the last poll but before running was reset
  }
}
