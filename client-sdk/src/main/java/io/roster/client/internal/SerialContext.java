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
 * <p>It owns no thread, and {@link #execute} never waits: it adds the task to the queue, then
 * runs the queue on the calling thread unless a thread is running it already (another one, or
 * this one in a task), in which case it returns at once and that thread runs the task after the
 * ones before it, before it leaves. So a transport thread with a stream's event, a scheduler
 * thread with a timer or a thread completing an answer is never parked behind another thread's
 * queue; the events of one stream still take effect in their order, and every task added before
 * an API call's task has taken effect when that call's task runs. It is never re-entrant: a task
 * that adds a task does not run it, nor wait for it; it runs after the current one returns. Only
 * {@link #call} (and {@link #run}) waits, on the caller's thread, for its task's result: for the
 * client's public methods that must return one, never for a transport, timer or answer thread.
 * Tasks must be short and must not block (no waiting for a future, a lock or I/O) and never run
 * user code: listeners run on the listener executor.
 *
 * <p>A task that throws does not stop the ones after it: its exception is logged at WARN (or, for
 * a {@link #call}, rethrown on the caller's thread) and the queue goes on.
 *
 * <p>Bounded: the queue has no limit of its own, and a thread that adds a task need not wait for
 * it, but the thread running the queue does not leave it while a task is left, and tasks are
 * short, so the queue holds what arrived while a few tasks ran: the frames and ends of the open
 * streams (one session, two during a move), the client's timers (a few per session, per
 * subscription and per hold), answers, and the API calls in progress (one per calling thread,
 * which waits). A task adds at most a few follow-up tasks of its own (a timer's next step, a
 * session's end after a cancel).
 *
 * <p>Thread-safe.
 */
final class SerialContext implements Executor {

  private static final Logger log = LoggerFactory.getLogger(SerialContext.class);

  private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
  private final AtomicReference<Thread> drainingThread = new AtomicReference<>();

  /**
   * Adds {@code task}, to run after every task added before it, and runs the queue on this
   * thread unless a thread is running it already; never waits for a task run elsewhere. From a
   * task, only adds it: it runs after the current one returns.
   */
  @Override
  public void execute(Runnable task) {
    queue.add(task);
    drain();
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
    Awaited awaited = new Awaited(() -> {
      try {
        result[0] = task.get();
      } catch (RuntimeException | Error e) {
        failure[0] = e;
      }
    });
    queue.add(awaited);
    drain();
    awaited.await();
    // The task has run (await returned): its writes happened before.
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

  /** The task of a {@link #call}, whose caller's thread waits until it has run. */
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
