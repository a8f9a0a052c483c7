package io.roster.client.internal;

import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The make-before-break move (decisions 29, 32, 34 and 47): moves the client to another server
 * without letting go of its session first.
 *
 * <p>A {@code reconnect} frame (the server stops, or sheds clients for balancing), or a change
 * the server answered UNAVAILABLE, makes the connection manager start a move with its
 * candidates: the suggested server, then the other addresses of the list (each at most once,
 * never the leaving one). A <em>standby</em> session is opened to the first: hello, welcome, and
 * the same redo as on any welcome, while the old session stays the active one and keeps serving
 * requests. Changes of desired state made meanwhile go to both ({@link #sendToStandby}). Once
 * the server has answered every frame of the standby's redo (and of those changes), ok or
 * error, the standby becomes the active session and the old one gets its goodbye (half-close),
 * after the new one has registered everything once more (its {@code reclaim}): on the server
 * the redo moved everything the old session owned, so its end removes nothing and subscribers
 * see no flap.
 *
 * <p>When the standby fails first (refused, ended, no welcome or no redo answers within the
 * connect timeout, or it asks to move too), the next candidate is tried; a standby that fails
 * after its redo went out may own some of the client's instances there, so it is not cancelled
 * but spent: it gets its goodbye once a later session has registered everything. When no
 * candidate is left, the client stays on the old session and tries the whole move again after
 * a back-off step (leaving would remove its instances with nowhere to take them; a stopping
 * server ends the session itself at the end of its grace). When the old session ends during the
 * move (its server stopped), the standby simply becomes the current session ({@link #handOver}):
 * active at once when its redo is out, else once welcomed. Pushes may arrive on both sessions
 * during a move; each is acked on the session it came from.
 *
 * <p>Its state (the move, the retry timer) is its own and changes only in the client's
 * {@link SerialContext}, as the connection manager's does. The connection manager owns it and
 * calls its methods there; it asks the connection manager only through {@link Loop}, and opens
 * and spends sessions through the {@link SessionOpener} and {@link SpentSessions} it is given.
 * Not thread-safe otherwise.
 */
final class Mover {

  private static final Logger log = LoggerFactory.getLogger(Mover.class);

  /** What a move needs of the connect loop that owns it; called in the context. */
  interface Loop {

    /** Whether {@code s} is the current session, active, and the client open. */
    boolean isActiveCurrent(Session s);

    /** Whether the client is closed. */
    boolean isClosed();

    /** The next back-off step, at least the initial one. */
    Duration backoffStep();

    /** With no session, connects to {@code address} (or the next of the list, when null) at once. */
    void connectTo(@Nullable ServerAddress address);

    /**
     * A move's standby {@code s} becomes the current session; active at once when {@code active}
     * (its redo is out), else once welcomed.
     */
    void takeOver(Session s, boolean active);

    /** {@code s} is over for this client; its timers stop. */
    void retire(Session s);

    /** A move that found no server tries again from the active session {@code s}. */
    void moveAgain(Session s, String reason);

    /** After a move: registers everything again on {@code s}; the results of its requests. */
    List<CompletableFuture<Answer>> reclaim(Session s);
  }

  private final Loop loop;
  private final SerialContext context;
  private final ScheduledExecutorService scheduler;
  private final Duration connectTimeout;
  private final SessionOpener opener;
  private final SpentSessions spent;

  /** A move in progress, or null. */
  private @Nullable Move move;
  /** A move that found no server to go to, tried again after a back-off step; or null. */
  private @Nullable Timer retry;

  Mover(Loop loop, SerialContext context, ScheduledExecutorService scheduler, Duration connectTimeout,
      SessionOpener opener, SpentSessions spent) {
    this.loop = loop;
    this.context = context;
    this.scheduler = scheduler;
    this.connectTimeout = connectTimeout;
    this.opener = opener;
    this.spent = spent;
  }

  /** Whether a move found no server a moment ago and waits to try again. */
  boolean retryPending() {
    return retry != null && retry.isPending();
  }

  /** Whether {@code s} is the session a move in progress leaves. */
  boolean isLeaving(Session s) {
    return move != null && s == move.leaving;
  }

  /** Whether {@code s} is the standby of a move in progress. */
  boolean isStandby(Session s) {
    return move != null && s == move.standby;
  }

  /** Whether {@code s} is the standby of a move in progress, not welcomed yet. */
  boolean awaitsWelcome(Session s) {
    Move m = move;
    return m != null && s == m.standby && !m.redoSent;
  }

  /** The standby session of a move in progress, or null. */
  @Nullable Session standby() {
    return move == null ? null : move.standby;
  }

  /** Starts moving the active session {@code leaving} to the first of {@code candidates} that takes it. */
  void begin(Session leaving, Collection<ServerAddress> candidates, String reason) {
    Timer.cancel(retry);
    move = new Move(leaving, new ArrayDeque<>(candidates), reason);
    nextCandidate();
  }

  /** The standby {@code s} was welcomed and {@code redo} sent on it. */
  void welcomed(Session s, SessionEvents.Welcomed welcome, List<CompletableFuture<Answer>> redo) {
    Move m = inProgress();
    log.info("Moving from Roster server {} to {} (connection {}, node {}): waiting for the answers "
        + "to {} redo frame(s) before the goodbye", m.leaving.address, s.address,
        welcome.connectionId(), welcome.nodeId(), redo.size());
    m.redoSent = true;
    m.awaiting = redo.size();
    opener.armConnectTimeout(s);
    for (CompletableFuture<Answer> f : redo) {
      awaitOnStandby(s, f);
    }
    promoteIfReady(s);
  }

  /** No welcome, or not every redo answer, came on the standby {@code s} within the connect timeout. */
  void timedOut(Session s) {
    dropStandby(s, inProgress().redoSent
        ? "not every redo frame answered within " + connectTimeout.toMillis() + " ms"
        : "no welcome within " + connectTimeout.toMillis() + " ms");
  }

  /** The server of the standby {@code s} asks to move too. */
  void reconnectAsked(Session s, String reason) {
    // The server we were moving to is leaving too.
    dropStandby(s, "it asked to reconnect (" + reason + ")");
  }

  /** The server of the standby {@code s} refused its hello: it owns nothing there. */
  void refused(Session s, String why) {
    dropStandby(s, why);
  }

  /** The stream of the standby {@code s} ended. */
  void closed(Session s, String why) {
    standbyFailed(s, why);
  }

  /**
   * The old session {@code s} of the move ended (its server stopped). The standby, if any,
   * becomes the current session: active at once when its redo is out (as after any welcome),
   * else through the normal welcome; without one, the next candidate is connected to at once.
   *
   * @return false when no move was in progress for {@code s}
   */
  boolean handOver(Session s) {
    Move m = move;
    if (m == null || s != m.leaving) {
      return false;
    }
    move = null;
    Timer.cancel(m.openTimer);
    Session next = m.standby;
    if (next == null) {
      loop.connectTo(m.candidates.peek());
      return true;
    }
    // When its redo is not out yet, its connect timer still runs, and its welcome is handled as
    // for any current session.
    loop.takeOver(next, m.redoSent);
    if (m.redoSent) {
      log.info("Connected to Roster server {} (connection {}) while moving to it", next.address,
          next.connectionId());
    }
    return true;
  }

  /** Drops a move in progress (the client closes), cancelling its standby. */
  void abandon(String why) {
    Timer.cancel(retry);
    Move m = move;
    if (m == null) {
      return;
    }
    move = null;
    Timer.cancel(m.openTimer);
    if (m.standby != null) {
      loop.retire(m.standby);
      m.standby.cancel(why);
    }
  }

  /**
   * Right after a change of desired state was sent on the active session: while a move's standby
   * has its redo out, the change goes there too (the redo predates it), and the move waits for
   * its result like for the redo's unless {@code awaited} is false. In the task that sent the
   * change, so that changes reach both sessions in the same order.
   */
  void sendToStandby(Request request, Duration timeout, String what, boolean awaited) {
    Move m = move;
    if (m == null || m.standby == null || !m.redoSent) {
      return;
    }
    Session s = m.standby;
    CompletableFuture<Answer> f = s.request(request, timeout);
    f.whenComplete((r, e) -> Requests.logBackground(what + " (on the server this client moves to)", r, e));
    if (awaited) {
      m.awaiting++;
      awaitOnStandby(s, f);
    }
  }

  /**
   * Tries the next candidate of the move with a standby session; when none is left, the move is
   * over: the client stays on the old session and tries again after a back-off step.
   */
  private void nextCandidate() {
    Move m = inProgress();
    if (m.candidates.isEmpty()) {
      move = null;
      if (loop.isActiveCurrent(m.leaving)) {
        // Leaving now would end the session that owns this client's instances, with nowhere to
        // take them: they would go, and come back on the next connection. Stay, and try again
        // after a back-off step; a server that stops ends the session itself at the end of its
        // grace (then the client reconnects as after any loss).
        Duration delay = loop.backoffStep();
        log.info("Could not move to another Roster server; staying on {} and trying again in {} ms",
            m.leaving.address, delay.toMillis());
        Session s = m.leaving;
        String reason = m.reason;
        retry = schedule(() -> moveAgain(s, reason), delay.toNanos());
      }
      return;
    }
    m.openTimer = schedule(this::openStandby, 0);
  }

  /** A move that found no server tries again, if still on {@code s}. */
  private void moveAgain(Session s, String reason) {
    retry = null;
    if (move != null || !loop.isActiveCurrent(s)) {
      return;
    }
    loop.moveAgain(s, reason);
  }

  /** Opens the standby session to the next candidate and says hello. */
  private void openStandby() {
    Move m = move;
    if (loop.isClosed() || m == null || m.standby != null || m.candidates.isEmpty()) {
      return;
    }
    ServerAddress address = m.candidates.poll();
    Session s = opener.newSession(address);
    m.standby = s;
    m.redoSent = false;
    m.awaiting = 0;
    m.claimed = false;
    log.debug("Opening a standby session to {} ({}) before leaving {}", address, s, m.leaving.address);
    RuntimeException failure = opener.openStream(s);
    if (failure != null) {
      standbyFailed(s, "could not open a session: " + failure);
      return;
    }
    opener.sayHello(s);
  }

  private void awaitOnStandby(Session s, CompletableFuture<Answer> f) {
    // Completes on the standby's transport thread (or inline when already done): back to the context.
    f.whenComplete((r, e) -> context.execute(() -> standbyAnswered(s, r, e)));
  }

  private void standbyAnswered(Session s, Answer result, Throwable error) {
    Move m = move;
    if (m == null || s != m.standby) {
      return;
    }
    if (error != null) {
      if (!(error instanceof Session.SessionLostException)) { // an ended stream reports itself
        dropStandby(s, "no answer to the redo: " + error);
      }
      return;
    }
    m.awaiting--;
    if (result != null && result.unavailable()) {
      // It cannot take writes (a cluster member cut off, or catching up): not a place to move to.
      dropStandby(s, "it could not take the redo: " + result.message());
      return;
    }
    m.claimed |= result != null && result.ok();
    promoteIfReady(s);
  }

  /** When every frame sent on the standby is answered, it replaces the old session. */
  private void promoteIfReady(Session s) {
    Move m = move;
    if (m == null || s != m.standby || !m.redoSent || m.awaiting > 0) {
      return;
    }
    move = null;
    Timer.cancel(m.openTimer);
    Session old = m.leaving;
    loop.takeOver(s, true);
    log.info("Moved from Roster server {} to {} (connection {}); saying goodbye to {}",
        old.address, s.address, s.connectionId(), old.address);
    List<Session> leaving = spent.takeAll();
    if (!old.isClosed()) {
      loop.retire(old);
      leaving.add(old);
      // A change the old session sent before the move may be applied after the new session's
      // redo (a cluster's log orders the two servers' entries as they come) and take its
      // instance back: the old session's end would then remove it. So once the old session has
      // answered everything, the new one registers everything again, and only then goodbye.
      old.allAnswered().whenComplete((done, error) -> context.execute(() -> reclaimThenLeave(s, leaving)));
    } else {
      leaving.forEach(Session::halfClose);
    }
  }

  private void reclaimThenLeave(Session s, List<Session> leaving) {
    List<CompletableFuture<Answer>> again = List.of();
    try {
      if (loop.isActiveCurrent(s)) {
        again = loop.reclaim(s);
      }
    } catch (RuntimeException e) {
      log.warn("Registering again on {} after the move failed", s.address, e);
    }
    CompletableFuture.allOf(again.toArray(CompletableFuture[]::new))
        .whenComplete((done, error) -> leaving.forEach(Session::halfClose));
  }

  /**
   * The standby {@code s} of the move failed. When some frame of its redo was taken there, or
   * may still be (unanswered), it may own some of this client's instances on its server: it is
   * spent, open without keepalive until a later session has registered everything. Otherwise
   * (refused before or during its redo) it owns nothing and is cancelled. Then the next
   * candidate is tried.
   */
  private void dropStandby(Session s, String why) {
    Move m = inProgress();
    if (m.redoSent && (m.claimed || m.awaiting > 0)) {
      spent.spend(s);
    } else {
      s.cancel(why);
    }
    standbyFailed(s, why);
  }

  /** The standby {@code s} of the move failed (its stream is cancelled or over). */
  private void standbyFailed(Session s, String why) {
    Move m = inProgress();
    loop.retire(s);
    m.standby = null;
    log.info("Could not move to Roster server {}: {}{}", s.address, why,
        m.candidates.isEmpty() ? "" : "; trying " + m.candidates.peek());
    nextCandidate();
  }

  /** The move in progress, which the caller's event belongs to. */
  private Move inProgress() {
    return Objects.requireNonNull(move, "no move in progress");
  }

  private Timer schedule(Runnable task, long delayNanos) {
    return context.schedule(task, delayNanos, TimeUnit.NANOSECONDS, scheduler);
  }

  /** A move: the session leaving, and where it may go. */
  private static final class Move {
    final Session leaving;
    /** Addresses not tried yet, in order. */
    final Deque<ServerAddress> candidates;
    /** The session being readied, or null between candidates. */
    @Nullable Session standby;
    /** The standby was welcomed and its redo sent. */
    boolean redoSent;
    /** Frames sent on the standby whose results have not come yet. */
    int awaiting;
    /** Some frame sent on the standby was answered ok: it owns something on its server. */
    boolean claimed;
    @Nullable Timer openTimer;
    /** Why the client moves (the server's reason), for a move tried again. */
    final String reason;

    Move(Session leaving, Deque<ServerAddress> candidates, String reason) {
      this.leaving = leaving;
      this.candidates = candidates;
      this.reason = reason;
    }
  }
}
