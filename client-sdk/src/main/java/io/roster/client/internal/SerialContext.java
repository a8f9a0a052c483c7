package io.roster.client.internal;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's one serial execution context: the state of the connection, the desired state,
 * the subscriptions and the polls is changed only by tasks run here, one at a time, in the order
 * they were added. The parts of the client talk by adding tasks and by calling each other's
 * methods from tasks, never through a shared lock or each other's fields.
 *
 * <p>It owns no thread: a task runs on the thread that adds it, unless another thread is running
 * tasks already, which then runs it too before it leaves ({@link #execute}). A thread outside
 * the context returns from {@link #execute} once its task has run (on its own thread or, after
 * the short tasks before it, on the other one), so that a stream's event, a timer or a caller's
 * change has taken effect when the callback or call that brought it returns, and the events of
 * one stream take effect in their order. It is never re-entrant: a task that adds a task does
 * not run it, nor wait for it; it runs after the current one returns. Tasks must be short and must not block (no waiting for a
 * future, a lock or I/O) and never run user code: listeners run on the listener executor, and
 * blocking calls wait on the caller's thread for the result of their task ({@link #call}).
 *
 * <p>Bounded: the queue has no limit of its own, but only a bounded set of sources adds to it. A
 * task added from outside has its thread waiting for it, so those are at most one per thread in
 * the client at that moment: a transport thread with a frame or the end of a stream, a scheduler
 * thread with a timer of the client (a few per session, per subscription and per hold), a thread
 * completing an answer the client waits for, or a caller in an API call. A task adds at most a
 * few follow-up tasks of its own (a timer's next step, a session's end after a cancel).
 *
 * <p>Thread-safe.
 */
final class SerialContext implements Executor {

  private static final Logger log = LoggerFactory.getLogger(SerialContext.class);

  private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Thread> drainingThread = new AtomicReference<>();

  /**
   * Runs {@code task} in the context. From a task: adds it, to run after the current one. From
   * outside: adds it, runs the queue on this thread unless another thread is running it, and
   * returns once {@code task} has run.
   */
  @Override
  public void execute(Runnable task) {
    if (inContext()) {
      queue.add(task);
      return;
    }
    Awaited awaited = new Awaited(task);
    queue.add(awaited);
    drain();
    awaited.await();
  }

  /**
   * Runs {@code task} here and returns its result, waiting for it on the caller's thread: for a
   * caller outside the context (an API call, which may block). Its exception is rethrown on the
   * caller's thread.
   *
   * @throws IllegalStateException when called from a task (it would wait for itself)
   */
  <T> T call(Supplier<T> task) {
    if (inContext()) {
      throw new IllegalStateException("a task of the client's serial context cannot wait for another");
    }
    Object[] result = new Object[1];
    Throwable[] failure = new Throwable[1];
    execute(() -> {
      try {
        result[0] = task.get();
      } catch (RuntimeException | Error e) {
        failure[0] = e;
      }
    });
    // The task has run (execute returned): its writes happened before.
    if (failure[0] instanceof RuntimeException re) {
      throw re;
    }
    if (failure[0] instanceof Error e) {
      throw e;
    }
    @SuppressWarnings("unchecked")
    T value = (T) result[0];
    return value;
  }

  /** {@link #call} for a task without a result. */
  void run(Runnable task) {
    call(() -> {
      task.run();
      return null;
    });
  }

  /** Whether the current thread is running a task of this context. */
  boolean inContext() {
    return drainingThread.get() == Thread.currentThread();
  }

  /**
   * Runs {@code task} in this context after {@code delay}, on {@code scheduler}'s thread (or
   * the thread running the queue then). Cancelled from a task ({@link Timer#cancel}), it does not
   * run, even when it was already due.
   */
  Timer schedule(Runnable task, long delay, TimeUnit unit, ScheduledExecutorService scheduler) {
    Timer timer = new Timer(task);
    timer.future = scheduler.schedule(() -> execute(timer), delay, unit);
    return timer;
  }

  private void drain() {
    do {
      if (!drainingThread.compareAndSet(null, Thread.currentThread())) {
        return;
      }
      try {
        Runnable task;
        while ((task = queue.poll()) != null) {
          try {
            task.run();
          } catch (RuntimeException | Error e) {
            if (e instanceof VirtualMachineError) {
              throw e;
            }
            log.warn("A task of the Roster client failed", e);
          }
        }
      } finally {
        drainingThread.set(null);
      }
      // A task added after the last poll but before the thread was cleared.
    } while (!queue.isEmpty());
  }

  /** A task added from outside, whose thread waits until it has run. */
  private static final class Awaited implements Runnable {
    private final Runnable task;
    private final Thread waiter = Thread.currentThread();
    private volatile boolean ran;

    Awaited(Runnable task) {
      this.task = task;
    }

    @Override
    public void run() {
      try {
        task.run();
      } finally {
        ran = true;
        LockSupport.unpark(waiter);
      }
    }

    /** Returns once the task has run; an interrupt is kept for the caller, not acted on. */
    void await() {
      boolean interrupted = false;
      while (!ran) {
        LockSupport.park(this);
        interrupted |= Thread.interrupted();
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A task scheduled in the context; {@link #cancel} and {@link #isPending} from tasks only. */
  @SuppressWarnings("AmbiguousMethodReference") // cancel() and cancel(Timer) do the same; javac refuses Timer::cancel anyway
  static final class Timer implements Runnable {
    private final Runnable task;
    @SuppressWarnings("NullAway.Init") // set by schedule() before it returns the timer, the one way to get one
    private ScheduledFuture<?> future;
    private boolean cancelled;
    private boolean started;

    private Timer(Runnable task) {
      this.task = task;
    }

    @Override
    public void run() {
      if (!cancelled) {
        started = true;
        task.run();
      }
    }

    /** Cancels it if it has not started; it will not run. */
    void cancel() {
      cancelled = true;
      future.cancel(false);
    }

    /** Neither started nor cancelled. */
    boolean isPending() {
      return !started && !cancelled;
    }

    /** Cancels {@code timer} if there is one. */
    static void cancel(@Nullable Timer timer) {
      if (timer != null) {
        timer.cancel();
      }
    }
  }
}
