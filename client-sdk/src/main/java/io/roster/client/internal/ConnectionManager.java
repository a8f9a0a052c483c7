package io.roster.client.internal;

import io.roster.client.ClientClosedException;
import io.roster.client.RosterException;
import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one session open to one server of the list at a time (two, briefly, while it moves to
 * another server: see make-before-break below).
 *
 * <p>Connecting sends {@code hello}; the session becomes active when the {@code welcome} arrives,
 * after the {@link Handler} redid the client's registrations and subscriptions on it (in the
 * same task of the client's {@link SerialContext}, so no request can slip in between). When a session ends (error, completion, no welcome
 * within the connect timeout, no frame within the keepalive timeout after a ping), the next
 * server of the list is tried after a jittered exponential back-off, which starts over after
 * every welcome whose redo the server took. A welcome that says the server is warming up marks
 * the session so ({@link Session#warming}), until the time it gave or a {@code warm_up_done}
 * frame.
 *
 * <p><b>Make-before-break.</b> A {@code reconnect} frame (the server stops, or sheds clients for
 * balancing) moves this client without letting go of the old session first. The candidates are
 * the suggested server, then the other addresses of the list (each at most once, never the
 * leaving one). A <em>standby</em> session is opened to the first: hello, welcome, and the same
 * redo as on any welcome, while the old session stays the active one and keeps serving
 * requests. Changes of desired state made meanwhile go to both ({@link #sendToStandby}). Once
 * the server has answered every frame of the standby's redo (and of those changes), ok or
 * error, the standby becomes the active session and the old one gets its goodbye (half-close):
 * on the server the redo moved everything the old session owned, so its end removes nothing
 * and subscribers see no flap. When the standby fails first (refused, ended, no welcome or no
 * redo answers within the connect timeout, or it asks to move too), the next candidate is
 * tried (a standby that fails after its redo went out may own some of the client's instances
 * there, so it is not cancelled: it gets its goodbye once a later session has registered
 * everything); when none is left, the client stays on the old session and tries the whole move
 * again after a back-off step (leaving would remove its instances with nowhere to take them; a
 * stopping server ends the session itself at the end of its grace). When the old session ends
 * during the move (its server stopped), the standby simply becomes the current session: active
 * at once when its redo is out, else once welcomed. When the leaving server is the only choice, there is no move: the goodbye
 * goes out at once and the next attempt waits one back-off step of at least the initial delay,
 * so as not to land on the server again while it drains. Pushes may arrive on both sessions
 * during a move; each is acked on the session it came from.
 *
 * <p>All timers run on the injected scheduler and all time readings come from the injected
 * ticker, so the whole state machine runs on a fake clock in tests. State is changed only by
 * tasks of the client's {@link SerialContext}, where the redo and every change of the desired
 * state run too, so that they never interleave: stream events, timers and the answers it waits
 * for are handed to it. Thread-safe.
 */
final class ConnectionManager {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  /** What the client does with sessions. */
  interface Handler {

    /**
     * A session was welcomed. Called in the context; send the redo on it and return the results
     * of its requests (a move waits for all of them before it makes the session active).
     *
     * @param seamless the session takes over from one that still serves (a move, make-before-break)
     *     and its server is not warming up: nothing was missed, and its states are whole
     */
    List<CompletableFuture<Answer>> onWelcome(Session session, boolean seamless);

    /** A push arrived. Called in the context, in the stream's order; ack it. */
    void onPush(Session session, SessionEvents.Pushed push);

    /** The session's server said its warm-up is over ({@code warm_up_done}). Called in the context. */
    default void onWarmUpDone(Session session) {}

    /**
     * After a move: registers everything again on the new session (the old one's last changes
     * may have been applied after its redo). Called in the context; returns the results.
     */
    default List<CompletableFuture<Answer>> reclaim(Session session) {
      return List.of();
    }
  }

  private final List<ServerAddress> addresses;
  private final Connector connector;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Backoff backoff;
  private final SerialContext context;
  private final Handler handler;
  private final Supplier<Request.Hello> hello;
  private final Supplier<String> requestIds;
  private final Duration connectTimeout;
  private final Duration keepAliveTime;
  private final Duration keepAliveTimeout;
  private final Inbound inbound = new Inbound();

  // Changed only in the context. Volatile where read outside it (activeSession,
  // addressesInPreferredOrder).
  private volatile int nextIndex;
  private volatile ServerAddress suggested;
  private volatile Session current;
  /** Callers waiting for the active session to change ({@link #awaitActiveOtherThan}): one per waiting thread. */
  private final List<CompletableFuture<Void>> activeWaiters = new ArrayList<>();
  /** The next connection attempt, or null. */
  private Timer attemptTimer;
  /** The connect timeout of each session opened and not yet active (the current one, a move's standby). */
  private final Map<Session, Timer> connectTimers = new IdentityHashMap<>();
  /** The keepalive of the active session, or null. */
  private Keepalive keepalive;
  /** A make-before-break move in progress, or null. */
  private Move move;
  /**
   * Standbys of a move that failed after their redo went out: on their servers they may own
   * some of this client's instances (a newer session wins them), so ending them now would
   * remove those. Each gets its goodbye once a later session has registered everything.
   */
  private final List<Session> spent = new ArrayList<>();
  /** At most this many {@link #spent} sessions are kept open at once. */
  private static final int MAX_SPENT = 2;
  /** A move that found no server to go to, tried again after a back-off step; or null. */
  private Timer moveRetry;
  private long sessionIds;
  private long lastSessionSeq;
  private int failedAttempts;
  private boolean outageLogged;
  private boolean closed;

  ConnectionManager(
      List<ServerAddress> addresses,
      Connector connector,
      ScheduledExecutorService scheduler,
      Ticker ticker,
      Backoff backoff,
      SerialContext context,
      Handler handler,
      Supplier<Request.Hello> hello,
      Supplier<String> requestIds,
      Duration connectTimeout,
      Duration keepAliveTime,
      Duration keepAliveTimeout) {
    this.addresses = List.copyOf(addresses);
    this.connector = connector;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.backoff = backoff;
    this.context = context;
    this.handler = handler;
    this.hello = hello;
    this.requestIds = requestIds;
    this.connectTimeout = connectTimeout;
    this.keepAliveTime = keepAliveTime;
    this.keepAliveTimeout = keepAliveTimeout;
  }

  /** Starts connecting (on the scheduler). */
  void start() {
    context.execute(() -> scheduleConnect(Duration.ZERO));
  }

  /** The active session, or null. From any thread; in the context, the current answer. */
  Session activeSession() {
    Session s = current;
    return s != null && s.isActive() ? s : null;
  }

  /**
   * Waits (real time) until a session is active.
   *
   * @return the active session, or null when none became active within {@code timeout}
   * @throws ClientClosedException when the client is or gets closed
   */
  Session awaitActive(Duration timeout) {
    return awaitActiveOtherThan(null, timeout);
  }

  /**
   * Waits for an active session other than {@code not} (one that refused a change with
   * UNAVAILABLE: the client is moving away from it); null on timeout.
   */
  Session awaitActiveOtherThan(Session not, Duration timeout) {
    Deadline deadline = Deadline.after(timeout);
    while (true) {
      CompletableFuture<Void> changed = new CompletableFuture<>();
      Session s = context.call(() -> {
        if (closed) {
          throw new ClientClosedException("the Roster client is closed");
        }
        if (current != null && current.isActive() && current != not) {
          return current;
        }
        activeWaiters.add(changed);
        return null;
      });
      if (s != null) {
        return s;
      }
      long left = deadline.remainingNanos();
      try {
        if (left <= 0) {
          return null;
        }
        changed.get(left, TimeUnit.NANOSECONDS);
      } catch (TimeoutException | ExecutionException e) {
        // Looks once more, then gives up.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new RosterException(RosterException.Code.UNAVAILABLE,
            "interrupted while waiting for a connection");
      } finally {
        if (!changed.isDone()) {
          context.execute(() -> activeWaiters.remove(changed));
        }
      }
    }
  }

  /** In the context: wakes the callers waiting for the active session to change. */
  private void signalActiveChanged() {
    List<CompletableFuture<Void>> waiting = new ArrayList<>(activeWaiters);
    activeWaiters.clear();
    waiting.forEach(w -> w.complete(null));
  }

  /** Servers in the order a one-off call should try them: the connected (or next) one first. */
  List<ServerAddress> addressesInPreferredOrder() {
    // Read outside the context: a hint, whose parts may be a moment apart.
    Session s = current;
    ServerAddress next = suggested;
    int index = nextIndex;
    ServerAddress first = s != null ? s.address : next != null ? next : addresses.get(index);
    List<ServerAddress> order = new ArrayList<>(addresses.size() + 1);
    order.add(first);
    for (int i = 0; i < addresses.size(); i++) {
      ServerAddress a = addresses.get((index + i) % addresses.size());
      if (!a.equals(first)) {
        order.add(a);
      }
    }
    return order;
  }

  /** The configured servers. */
  List<ServerAddress> addresses() {
    return addresses;
  }

  /**
   * Stops reconnecting and says goodbye: half-closes an active session and waits at most
   * {@code timeout} for the server to complete it (then cancels it). Idempotent.
   */
  void close(Duration timeout) {
    Session[] closing = new Session[1];
    boolean wasActive = context.call(() -> {
      if (closed) {
        return false;
      }
      closed = true;
      Timer.cancel(attemptTimer);
      Timer.cancel(moveRetry);
      abandonMove("client closed");
      spent.forEach(Session::halfClose);
      spent.clear();
      Session s = current;
      closing[0] = s;
      current = null;
      boolean active = s != null && s.isActive();
      if (s != null) {
        retire(s);
      }
      signalActiveChanged();
      return active;
    });
    Session s = closing[0];
    if (s == null) {
      return;
    }
    if (wasActive) {
      s.halfClose();
      try {
        s.endedFuture().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        log.info("Disconnected from {}: client closed", s.address);
        return;
      } catch (TimeoutException | ExecutionException e) {
        log.info("Server {} did not complete the session within {} ms of the goodbye; "
            + "cancelling it", s.address, timeout.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    s.cancel("client closed");
  }

  // ---- state machine (all in the context) ----

  private void scheduleConnect(Duration delay) {
    if (closed) {
      return;
    }
    Timer.cancel(attemptTimer);
    attemptTimer = schedule(this::connect, delay.toNanos());
  }

  private void connect() {
    if (closed || current != null) {
      return;
    }
    ServerAddress address;
    if (suggested != null) {
      address = suggested;
      suggested = null;
    } else {
      address = addresses.get(nextIndex);
      nextIndex = (nextIndex + 1) % addresses.size();
    }
    Session s = new Session(++sessionIds, address, scheduler, requestIds, ticker);
    current = s;
    log.debug("Connecting to {} ({})", address, s);
    try {
      s.attach(connector.openSession(address, s.inbound(inbound)));
    } catch (RuntimeException e) {
      current = null;
      s.ended(new Session.SessionLostException("could not open a session: " + e));
      attemptFailed(s, e.toString());
      return;
    }
    sayHello(s);
  }

  private void connectTimedOut(Session s) {
    if (move != null && s == move.standby) {
      String why = move.redoSent
          ? "not every redo frame answered within " + connectTimeout.toMillis() + " ms"
          : "no welcome within " + connectTimeout.toMillis() + " ms";
      dropStandby(s, why);
      return;
    }
    if (s != current || !s.isConnecting()) {
      return;
    }
    current = null;
    retire(s);
    s.cancel("no welcome within " + connectTimeout.toMillis() + " ms");
    attemptFailed(s, "no welcome within " + connectTimeout.toMillis() + " ms");
  }

  private void welcomed(Session s, SessionEvents.Welcomed welcome) {
    boolean asStandby = move != null && s == move.standby && !move.redoSent;
    if ((s != current && !asStandby) || !s.isConnecting() || closed) {
      return;
    }
    Timer.cancel(connectTimers.remove(s));
    // Before the redo: the pushes it brings are judged by the warm-up. The server ends a session
    // that sends nothing for its keepalive time + timeout, so ping at least as often as it asks.
    long warmUpMs = s.welcomed(welcome, keepAliveTime.toNanos());
    if (warmUpMs > 0) {
      log.info("Roster server {} is warming up for {} ms more: removals are held back until then",
          s.address, warmUpMs);
    }
    List<CompletableFuture<Answer>> redo = List.of();
    try {
      redo = handler.onWelcome(s, asStandby && !s.warming());
    } catch (RuntimeException e) {
      log.warn("Redo on {} failed; it continues on the next connection", s.address, e);
    }
    if (asStandby) {
      log.info("Moving from Roster server {} to {} (connection {}, node {}): waiting for the answers "
          + "to {} redo frame(s) before the goodbye", move.leaving.address, s.address,
          welcome.connectionId(), welcome.nodeId(), redo.size());
      standbyRedone(s, redo);
      return;
    }
    activate(s, false);
    log.info("Connected to Roster server {} (connection {}, node {})",
        s.address, welcome.connectionId(), welcome.nodeId());
    afterRedo(s, redo);
    for (CompletableFuture<Answer> f : redo) {
      // A redo the server could not take (a member that cannot write) is redone elsewhere.
      f.thenAccept(r -> {
        if (r.unavailable()) {
          moveAway(s, "it could not take the redo: " + r.message());
        }
      });
    }
  }

  /** In the context: {@code s} (welcomed, redo sent and answered) becomes the active session. */
  private void activate(Session s) {
    activate(s, true);
  }

  /**
   * In the context: {@code s} (welcomed, redo sent) becomes the active session; the back-off starts
   * over now ({@code resetBackoff}) or once its redo was taken ({@link #resetBackoffIfTaken}).
   */
  private void activate(Session s, boolean resetBackoff) {
    Timer.cancel(connectTimers.remove(s));
    s.activate();
    if (resetBackoff) {
      backoff.reset();
    }
    failedAttempts = 0;
    outageLogged = false;
    signalActiveChanged();
    if (keepalive != null) {
      keepalive.stop();
    }
    keepalive = new Keepalive(s, context, scheduler, ticker, keepAliveTimeout, () -> silent(s));
    keepalive.start();
  }

  /**
   * In the context: once the redo just sent on {@code s} is answered, the {@link #spent} sessions get
   * their goodbye, and, if the server took it, the back-off starts over (a server that welcomes
   * the client but refuses its redo, a cluster member whose log commits nothing, sends it
   * elsewhere with a growing delay, not every initial back-off step).
   */
  private void afterRedo(Session s, List<CompletableFuture<Answer>> redo) {
    List<Session> leaving = takeSpent();
    CompletableFuture.allOf(redo.toArray(CompletableFuture[]::new)).whenComplete((done, error) -> {
      boolean taken = error == null
          && redo.stream().noneMatch(f -> f.join().unavailable());
      context.execute(() -> {
        if (!taken) {
          // This server holds nothing yet: the spent sessions may still hold the instances.
          leaving.forEach(this::spend);
          return;
        }
        if (s == current && s.isActive()) {
          backoff.reset();
        }
        leaving.forEach(Session::halfClose);
      });
    });
  }

  /**
   * The server of {@code s} answered a change with UNAVAILABLE (a cluster member that cannot
   * take writes, or is catching up): move to another server as if it had sent {@code reconnect}
   * (make-before-break), so that the redo there applies what this one refused.
   */
  void moveAway(Session s, String why) {
    context.execute(() -> reconnectRequested(s, why, ""));
  }

  private void reconnectRequested(Session s, String reason, String suggestedServer) {
    if (move != null && s == move.standby) {
      // The server we were moving to is leaving too.
      dropStandby(s, "it asked to reconnect (" + reason + ")");
      return;
    }
    if (s != current || closed || (move != null && s == move.leaving)) {
      return;
    }
    if (moveRetry != null && moveRetry.isPending() && suggestedServer.isEmpty()) {
      return; // a move found no server a moment ago; it is tried again after its back-off
    }
    log.info("Server {} asked this client to reconnect ({}){}", s.address,
        reason.isEmpty() ? "no reason given" : reason,
        suggestedServer.isEmpty() ? "" : "; trying " + suggestedServer + " first");
    ServerAddress leaving = s.address;
    ServerAddress proposal = null;
    if (!suggestedServer.isEmpty()) {
      try {
        proposal = ServerAddress.parse(suggestedServer);
        proposal = proposal.equals(leaving) ? null : proposal;
      } catch (RosterException e) {
        log.warn("Ignoring an unusable suggested server '{}'", suggestedServer);
      }
    }
    // Each address at most once: the suggestion first, then the list from where it stands.
    Set<ServerAddress> candidates = new LinkedHashSet<>();
    if (proposal != null) {
      candidates.add(proposal);
    }
    for (int i = 0; i < addresses.size(); i++) {
      ServerAddress a = addresses.get((nextIndex + i) % addresses.size());
      if (!a.equals(leaving)) {
        candidates.add(a);
      }
    }
    if (s.isActive() && !candidates.isEmpty()) {
      Timer.cancel(moveRetry);
      move = new Move(s, new ArrayDeque<>(candidates), reason);
      nextCandidate();
      return;
    }
    // Nowhere else to go (or not even welcomed here): break before make.
    suggested = proposal;
    if (suggested == null && addresses.get(nextIndex).equals(leaving)) {
      nextIndex = (nextIndex + 1) % addresses.size(); // the next address, not the leaving one
    }
    boolean elsewhere = suggested != null || !addresses.get(nextIndex).equals(leaving);
    leave(s, elsewhere ? Duration.ZERO : atLeast(backoff.next(), backoff.initial()));
  }

  /**
   * In the context: says goodbye on the current session {@code s} and connects again after {@code
   * delay}. Promptly to another server; when the leaving one is the only choice, reconnecting at
   * once would only reach it again while it drains, hence the caller's back-off.
   */
  private void leave(Session s, Duration delay) {
    current = null;
    retire(s);
    signalActiveChanged();
    // Goodbye on the old session; its pending requests are answered or fail when it ends.
    s.halfClose();
    scheduleConnect(delay);
  }

  // ---- make-before-break (all in the context) ----

  /**
   * In the context: tries the next candidate of the move with a standby session; when none is left,
   * the move is over and the old session gets its goodbye now (break before make).
   */
  private void nextCandidate() {
    Move m = move;
    if (m.candidates.isEmpty()) {
      move = null;
      if (m.leaving == current && m.leaving.isActive()) {
        // Leaving now would end the session that owns this client's instances, with nowhere to
        // take them: they would go, and come back on the next connection. Stay, and try again
        // after a back-off step; a server that stops ends the session itself at the end of its
        // grace (then the client reconnects as after any loss).
        Duration delay = atLeast(backoff.next(), backoff.initial());
        log.info("Could not move to another Roster server; staying on {} and trying again in {} ms",
            m.leaving.address, delay.toMillis());
        Session s = m.leaving;
        String reason = m.reason;
        moveRetry = schedule(() -> moveAgain(s, reason), delay.toNanos());
      }
      return;
    }
    m.openTimer = schedule(this::openStandby, 0);
  }

  /** On the scheduler: a move that found no server tries again, if still on {@code s}. */
  private void moveAgain(Session s, String reason) {
    moveRetry = null;
    if (closed || move != null || s != current || !s.isActive()) {
      return;
    }
    reconnectRequested(s, reason, "");
  }

  /** On the scheduler: opens the standby session to the next candidate and says hello. */
  private void openStandby() {
    Move m = move;
    if (closed || m == null || m.standby != null || m.candidates.isEmpty()) {
      return;
    }
    ServerAddress address = m.candidates.poll();
    Session s = new Session(++sessionIds, address, scheduler, requestIds, ticker);
    m.standby = s;
    m.redoSent = false;
    m.awaiting = 0;
    m.claimed = false;
    log.debug("Opening a standby session to {} ({}) before leaving {}", address, s, m.leaving.address);
    try {
      s.attach(connector.openSession(address, s.inbound(inbound)));
    } catch (RuntimeException e) {
      s.ended(new Session.SessionLostException("could not open a session: " + e));
      standbyFailed(s, "could not open a session: " + e);
      return;
    }
    sayHello(s);
  }

  /**
   * In the context: the standby was welcomed and its redo sent; it becomes active once every frame
   * of it is answered, within the connect timeout.
   */
  private void standbyRedone(Session s, List<CompletableFuture<Answer>> redo) {
    move.redoSent = true;
    move.awaiting = redo.size();
    Timer.cancel(connectTimers.put(s, schedule(() -> connectTimedOut(s), connectTimeout.toNanos())));
    for (CompletableFuture<Answer> f : redo) {
      awaitOnStandby(s, f);
    }
    promoteIfReady(s);
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

  /** In the context: when every frame sent on the standby is answered, it replaces the old session. */
  private void promoteIfReady(Session s) {
    Move m = move;
    if (m == null || s != m.standby || !m.redoSent || m.awaiting > 0) {
      return;
    }
    move = null;
    Timer.cancel(m.openTimer);
    Session old = m.leaving;
    current = s;
    activate(s);
    log.info("Moved from Roster server {} to {} (connection {}); saying goodbye to {}",
        old.address, s.address, s.connectionId(), old.address);
    List<Session> leaving = takeSpent();
    if (!old.isClosed()) {
      retire(old);
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
      if (s == current && s.isActive() && !closed) {
        again = handler.reclaim(s);
      }
    } catch (RuntimeException e) {
      log.warn("Registering again on {} after the move failed", s.address, e);
    }
    CompletableFuture.allOf(again.toArray(CompletableFuture[]::new))
        .whenComplete((done, error) -> leaving.forEach(Session::halfClose));
  }

  /**
   * In the context: the standby {@code s} of the move failed. When some frame of its redo was taken
   * there, or may still be (unanswered), it may own some of this client's instances on its
   * server: it stays open (without keepalive) among the {@link #spent} sessions until a later
   * session has registered everything. Otherwise (refused before or during its redo) it owns
   * nothing and is cancelled. Then the next candidate is tried.
   */
  private void dropStandby(Session s, String why) {
    if (move.redoSent && (move.claimed || move.awaiting > 0)) {
      spend(s);
    } else {
      s.cancel(why);
    }
    standbyFailed(s, why);
  }

  /**
   * In the context: keeps {@code s}, which may own some of this client's instances on its server,
   * open (without keepalive) among the {@link #spent} sessions, until a later session's redo
   * has been taken. Bounded: beyond {@link #MAX_SPENT}, the oldest gets its goodbye.
   */
  private void spend(Session s) {
    if (closed || s.endedFuture().isDone()) {
      s.halfClose();
      return;
    }
    spent.add(s);
    if (spent.size() > MAX_SPENT) {
      spent.remove(0).halfClose(); // bounded: the oldest goes, with whatever it still owns
    }
  }

  /** In the context: the {@link #spent} sessions, which the caller now ends. */
  private List<Session> takeSpent() {
    List<Session> taken = new ArrayList<>(spent);
    spent.clear();
    return taken;
  }

  /** In the context: the standby {@code s} of the move failed (its stream is cancelled or over). */
  private void standbyFailed(Session s, String why) {
    Move m = move;
    retire(s);
    m.standby = null;
    log.info("Could not move to Roster server {}: {}{}", s.address, why,
        m.candidates.isEmpty() ? "" : "; trying " + m.candidates.peek());
    nextCandidate();
  }

  /**
   * In the context: the old session of the move ended (its server stopped). The standby, if any,
   * becomes the current session: active at once when its redo is out (as after any welcome),
   * else through the normal welcome; without one, the next candidate is connected to at once.
   *
   * @return false when no move was in progress for {@code s}
   */
  private boolean handOver(Session s) {
    Move m = move;
    if (m == null || s != m.leaving) {
      return false;
    }
    move = null;
    Timer.cancel(m.openTimer);
    Session next = m.standby;
    if (next == null) {
      suggested = m.candidates.peek();
      scheduleConnect(Duration.ZERO);
      return true;
    }
    current = next;
    if (m.redoSent) {
      activate(next);
      log.info("Connected to Roster server {} (connection {}) while moving to it", next.address,
          next.connectionId());
    }
    // Else its connect timer still runs, and its welcome is handled as for any current session.
    return true;
  }

  /** In the context: drops a move in progress (the client closes), cancelling its standby. */
  private void abandonMove(String why) {
    Move m = move;
    if (m == null) {
      return;
    }
    move = null;
    Timer.cancel(m.openTimer);
    if (m.standby != null) {
      retire(m.standby);
      m.standby.cancel(why);
    }
  }

  /**
   * Right after a change of desired state was sent on the active session: while a move's standby
   * has its redo out, the change goes there too (the redo predates it), and the move waits for
   * its result like for the redo's unless {@code awaited} is false. In the context, in the task
   * that sent the change, so that changes reach both sessions in the same order.
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

  /** The standby session of a move in progress, or null. For tests. */
  Session standbySession() {
    return context.call(() -> move == null ? null : move.standby);
  }

  /** Sends hello on a session just opened and starts its connect timer. In the context. */
  private void sayHello(Session s) {
    // Grows with every session, also across restarts of a client with a fixed id: the wall
    // clock in µs, kept increasing. The server lets a newer session's registration win.
    lastSessionSeq = Math.max(lastSessionSeq + 1, ticker.currentTimeMillis() * 1000);
    s.send(hello.get().withSessionSeq(lastSessionSeq));
    Timer.cancel(connectTimers.put(s, schedule(() -> connectTimedOut(s), connectTimeout.toNanos())));
  }

  private static Duration atLeast(Duration d, Duration min) {
    return d.compareTo(min) < 0 ? min : d;
  }

  private void streamClosed(Session s, String why) {
    if (s == current) {
      boolean wasActive = s.isActive();
      current = null;
      retire(s);
      if (wasActive) {
        log.info("Disconnected from Roster server {}: {}", s.address, why);
        signalActiveChanged();
        if (!handOver(s)) {
          scheduleConnect(backoff.next());
        }
      } else {
        attemptFailed(s, why);
      }
    } else if (move != null && s == move.standby) {
      standbyFailed(s, why);
    } else {
      spent.remove(s);
    }
    s.ended(new Session.SessionLostException("session to " + s.address + " ended: " + why));
  }

  /** In the context: the keepalive gave up on the active session {@code s}. */
  private void silent(Session s) {
    if (s != current || !s.isActive()) {
      return;
    }
    current = null;
    retire(s);
    // Not cancelled: a server that is only slow (starved, or a cluster member between
    // leaders) would end the session at once and remove its instances, maybe before the
    // next session's redo reaches the log. It ends with a goodbye once that redo is
    // taken, or by the server's own silence check.
    spend(s);
    signalActiveChanged();
    if (!handOver(s)) {
      scheduleConnect(backoff.next());
    }
  }

  private void attemptFailed(Session s, String why) {
    failedAttempts++;
    Duration delay = backoff.next();
    if (failedAttempts >= addresses.size() && !outageLogged) {
      outageLogged = true;
      log.warn("Cannot reach any Roster server of {} (last: {}: {}); retrying with back-off",
          addresses, s.address, why);
    } else {
      log.debug("Could not connect to {}: {}; next attempt in {} ms", s.address, why,
          delay.toMillis());
    }
    scheduleConnect(delay);
  }

  /** In the context: {@code s} is over for this client; its timers stop. */
  private void retire(Session s) {
    s.retire();
    Timer.cancel(connectTimers.remove(s));
    if (keepalive != null && keepalive.session() == s) {
      keepalive.stop();
      keepalive = null;
    }
  }

  /** Runs {@code task} in the context after {@code delayNanos} of the scheduler's time. */
  private Timer schedule(Runnable task, long delayNanos) {
    return context.schedule(task, delayNanos, TimeUnit.NANOSECONDS, scheduler);
  }

  /** A make-before-break move: the session leaving, and where it may go. Changed in the context only. */
  private static final class Move {
    final Session leaving;
    /** Addresses not tried yet, in order. */
    final Deque<ServerAddress> candidates;
    /** The session being readied, or null between candidates. */
    Session standby;
    /** The standby was welcomed and its redo sent. */
    boolean redoSent;
    /** Frames sent on the standby whose results have not come yet. */
    int awaiting;
    /** Some frame sent on the standby was answered ok: it owns something on its server. */
    boolean claimed;
    Timer openTimer;
    /** Why the client moves (the server's reason), for a move tried again. */
    final String reason;

    Move(Session leaving, Deque<ServerAddress> candidates, String reason) {
      this.leaving = leaving;
      this.candidates = candidates;
      this.reason = reason;
    }
  }

  /** What the sessions' servers say, on their transport threads. */
  private final class Inbound implements SessionEvents {

    @Override
    public void welcomed(Session s, SessionEvents.Welcomed welcome) {
      context.execute(() -> ConnectionManager.this.welcomed(s, welcome));
    }

    @Override
    public void pushed(Session s, SessionEvents.Pushed push) {
      context.execute(() -> handler.onPush(s, push));
    }

    @Override
    public void reconnectAsked(Session s, String reason, String suggestedServer) {
      context.execute(() -> reconnectRequested(s, reason, suggestedServer));
    }

    @Override
    public void warmUpDone(Session s) {
      context.execute(() -> {
        if (s.warmUpDone()) {
          handler.onWarmUpDone(s);
        }
      });
    }

    @Override
    public void closed(Session s, String why) {
      context.execute(() -> streamClosed(s, why));
    }
  }
}
