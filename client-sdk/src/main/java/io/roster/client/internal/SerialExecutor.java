package io.roster.client.internal;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs tasks one at a time, in the order they were added, on a delegate executor: the listener
 * events of one subscription, on the listener executor. Unlike the client's
 * {@link SerialContext}, whose tasks are the client's own short steps and run on whichever
 * thread enters it, these tasks are user code and run only on the delegate.
 *
 * <p>Adding and running are split so that a task of the serial context can add (which fixes the
 * order) while the drain ({@link #drain()}) is started outside it, or in it only when the
 * delegate is the client's own pool, which never runs a task inline: user code never runs in
 * the context. Thread-safe.
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
