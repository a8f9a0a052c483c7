package io.roster.server.registry;

import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * Whether this node's registry may still be missing live registrations because it has just
 * started: after a start, the clients of the previous process are still reconnecting and
 * redoing, so a state it serves may lack instances that are alive. Clients are told how long
 * this lasts (in {@code welcome} and in query answers) and do not drop instances they already
 * have because of such a state until it is over (docs/decisions.md, record 20).
 *
 * <p>The warm-up is an explicit state, not only a timer: it ends when the window runs out or
 * when {@link #warmUpDone()} is called, whichever comes first. A cluster member that rejoins
 * catches up from the log before it serves, so the cluster layer ends its warm-up once caught
 * up; the window is for a standalone server or a whole-cluster restart. Listeners hear of the
 * end once, on the thread that ended it (the scheduler's, for the window). Thread-safe.
 */
public final class WarmUp {

  private final Scheduler scheduler;
  private final Duration window;
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  /** When the window ends; Long.MIN_VALUE until it has begun. Guarded by this. */
  private long endsAtNanos = Long.MIN_VALUE;
  private Scheduler.@Nullable Cancellable timer;
  private volatile boolean done;

  private WarmUp(Scheduler scheduler, Duration window) {
    if (window.isNegative()) {
      throw new IllegalArgumentException("warm-up window: " + window + " (expected: >= 0)");
    }
    this.scheduler = scheduler;
    this.window = window;
    this.done = window.isZero();
  }

  /**
   * Starts warming up now, for at most {@code window}.
   *
   * @param window zero for a node that is warm from the start
   */
  public static WarmUp start(Scheduler scheduler, Duration window) {
    WarmUp w = new WarmUp(scheduler, window);
    w.begin();
    return w;
  }

  /**
   * A warm-up whose window runs from {@link #begin()}: the server's port opening, since the
   * clients of the previous process come back from then on. Until then it is not warm and its
   * whole window is left.
   *
   * @param window zero for a node that is warm from the start
   */
  public static WarmUp pending(Scheduler scheduler, Duration window) {
    return new WarmUp(scheduler, window);
  }

  /** Starts the window now (idempotent); a warm-up already over stays over. */
  public synchronized void begin() {
    if (done || endsAtNanos != Long.MIN_VALUE) {
      return;
    }
    endsAtNanos = scheduler.nanoTime() + window.toNanos();
    timer = scheduler.schedule(this::warmUpDone, window);
  }

  /** A node that is warm from the start. */
  public static WarmUp warm(Scheduler scheduler) {
    return new WarmUp(scheduler, Duration.ZERO);
  }

  /** True once the warm-up is over: states served from now on are complete. */
  public boolean isWarm() {
    return done;
  }

  /** How much longer the warm-up lasts at most; zero once it is over. */
  public Duration remaining() {
    if (done) {
      return Duration.ZERO;
    }
    long ends;
    synchronized (this) {
      ends = endsAtNanos;
    }
    if (ends == Long.MIN_VALUE) {
      return window;
    }
    long left = ends - scheduler.nanoTime();
    return left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
  }

  /**
   * Ends the warm-up now (idempotent): the registry holds every live registration, e.g. a
   * cluster member that has caught up from the log. Listeners run on this thread.
   */
  public void warmUpDone() {
    Scheduler.Cancellable t;
    synchronized (this) {
      if (done) {
        return;
      }
      done = true;
      t = timer;
    }
    if (t != null) {
      t.cancel();
    }
    for (Runnable l : listeners) {
      l.run();
    }
  }

  /**
   * Runs {@code listener} when the warm-up ends; never when it is already over (the caller
   * reads {@link #isWarm()} after registering to cover that race).
   */
  public void onWarm(Runnable listener) {
    listeners.add(listener);
  }
}
