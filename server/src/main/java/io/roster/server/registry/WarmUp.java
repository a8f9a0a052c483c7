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
 * <p>The warm-up is an explicit state, not only a timer: it ends when the window runs out, when
 * the reconnect storm is over (no {@link #arrived() arrival} for a quiet period since the last
 * one, if it has a quiet period; a server no client has come back to waits for the window),
 * or when {@link #warmUpDone()} is called, whichever comes first (decision 88). The window is
 * the bound: a slow storm on a loaded machine is waited for up to it, a quick one ends the
 * warm-up a quiet period after its last client. A cluster member that rejoins catches up from
 * the log before it serves, so the cluster layer ends its warm-up once caught up; the window is
 * for a standalone server or a whole-cluster restart. Listeners hear of the end once, on the
 * thread that ended it (the scheduler's, for the window and the quiet period). Thread-safe;
 * {@link #arrived()} is cheap and may be called on any thread, for every session and change.
 */
public final class WarmUp {

  private final Scheduler scheduler;
  private final Duration window;
  /** No arrival for this long ends the warm-up; zero: only the window does. */
  private final Duration quiet;
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  /** When the window ends; Long.MIN_VALUE until it has begun. Guarded by this. */
  private long endsAtNanos = Long.MIN_VALUE;
  private Scheduler.@Nullable Cancellable timer;
  private Scheduler.@Nullable Cancellable quietTimer;
  /** The last arrival. */
  private volatile long arrivedNanos;
  /** The window has begun, and the quiet period is watched once a client arrives. */
  private volatile boolean begun;
  /** The quiet period's timer runs: a client has arrived since the window began. */
  private volatile boolean storm;
  private volatile boolean done;

  private WarmUp(Scheduler scheduler, Duration window, Duration quiet) {
    if (window.isNegative()) {
      throw new IllegalArgumentException("warm-up window: " + window + " (expected: >= 0)");
    }
    if (quiet.isNegative()) {
      throw new IllegalArgumentException("warm-up quiet period: " + quiet + " (expected: >= 0)");
    }
    this.scheduler = scheduler;
    this.window = window;
    this.quiet = quiet;
    this.done = window.isZero();
  }

  /**
   * Starts warming up now, for at most {@code window}.
   *
   * @param window zero for a node that is warm from the start
   */
  public static WarmUp start(Scheduler scheduler, Duration window) {
    WarmUp w = new WarmUp(scheduler, window, Duration.ZERO);
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
    return new WarmUp(scheduler, window, Duration.ZERO);
  }

  /**
   * Same, and the warm-up also ends once {@code quiet} has passed since the last {@link
   * #arrived() arrival}: the clients of the previous process are back. Until the first arrival
   * only the window ends it (on a loaded machine the first clients can take seconds).
   *
   * @param quiet zero for a warm-up that lasts its whole window; one as long as the window or
   *     longer changes nothing either
   */
  public static WarmUp pending(Scheduler scheduler, Duration window, Duration quiet) {
    return new WarmUp(scheduler, window, quiet);
  }

  /** Starts the window now (idempotent); a warm-up already over stays over. */
  public synchronized void begin() {
    if (done || endsAtNanos != Long.MIN_VALUE) {
      return;
    }
    endsAtNanos = scheduler.nanoTime() + window.toNanos();
    timer = scheduler.schedule(this::warmUpDone, window);
    begun = !quiet.isZero() && quiet.compareTo(window) < 0;
  }

  /**
   * A client came (back): a session opened, or a registration or other change reached the
   * registry. While warming up, the quiet period starts again from now (the first arrival
   * starts it: until a client is back, only the window ends the warm-up); otherwise (and before
   * {@link #begin()}) nothing happens.
   */
  public void arrived() {
    if (done || !begun) {
      return;
    }
    arrivedNanos = scheduler.nanoTime();
    if (!storm) {
      synchronized (this) {
        if (!storm && !done) {
          storm = true;
          quietTimer = scheduler.schedule(this::quietOrAgain, quiet);
        }
      }
    }
  }

  /** The quiet period's timer: over if nothing arrived within it, else looked at again when it could be. */
  private void quietOrAgain() {
    long since = scheduler.nanoTime() - arrivedNanos;
    if (since >= quiet.toNanos()) {
      warmUpDone();
      return;
    }
    synchronized (this) {
      if (!done) {
        quietTimer = scheduler.schedule(this::quietOrAgain, quiet.minusNanos(since));
      }
    }
  }

  /** A node that is warm from the start. */
  public static WarmUp warm(Scheduler scheduler) {
    return new WarmUp(scheduler, Duration.ZERO, Duration.ZERO);
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
    Scheduler.Cancellable q;
    synchronized (this) {
      if (done) {
        return;
      }
      done = true;
      t = timer;
      q = quietTimer;
    }
    if (t != null) {
      t.cancel();
    }
    if (q != null) {
      q.cancel();
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
