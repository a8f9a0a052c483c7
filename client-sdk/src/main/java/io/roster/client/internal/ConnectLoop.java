package io.roster.client.internal;

import io.roster.client.RosterException;
import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state machine of the {@link ConnectionManager}, which owns it: the current session and its
 * attempts, welcome and redo, keepalive and losses, the back-off, and the decision to move (to its
 * {@link Mover}) or to break; as that class describes. It runs only in the client's
 * {@link SerialContext}: every method is called in a task, except {@link #current} (any thread)
 * and {@link #moveAway} (adds a task). Stream events come back to it through {@link Inbound},
 * which hands each to the context. Its log lines come from the connection manager's logger.
 */
final class ConnectLoop {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  /** The session the client is closing with, and whether it was active. */
  record Closing(Session session, boolean active) {}

  private final ServerRotation rotation;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Backoff backoff;
  private final SerialContext context;
  private final ConnectionManager.Handler handler;
  private final TokenRenewal renewal;
  private final Duration connectTimeout;
  private final Duration keepAliveTime;
  private final Duration keepAliveTimeout;
  private final Inbound inbound = new Inbound();
  /** Callers waiting for the active session to change. */
  private final ActiveWaiters waiters;

  // Changed only in the context. Volatile where read outside it (current).
  private volatile @Nullable Session current;
  /** The next connection attempt, or null. */
  private @Nullable Timer attemptTimer;
  /** The keepalive of the active session, or null. */
  private @Nullable Keepalive keepalive;
  /** The make-before-break move, and its state. */
  private final Mover mover;
  /** Sessions that may still own some of this client's instances, until a later redo is taken. */
  private final SpentSessions spent = new SpentSessions();
  /** Opens sessions, says hello and owns their connect timers. */
  private final SessionOpener opener;
  /** The redo after a welcome and what follows its answers. */
  private final Redo redos;
  private int failedAttempts;
  private boolean outageLogged;
  /** Hellos refused for their credentials: the last refusal and the auth back-off. */
  private final AuthRefusals authRefusals;
  private boolean closed;

  ConnectLoop(ServerRotation rotation, Connector connector, ScheduledExecutorService scheduler, Ticker ticker,
      Backoff backoff, AuthRefusals authRefusals, SerialContext context, ConnectionManager.Handler handler,
      Supplier<Request.Hello> hello, Supplier<String> requestIds, Duration connectTimeout, Duration keepAliveTime,
      Duration keepAliveTimeout, ActiveWaiters waiters) {
    this.rotation = rotation;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.backoff = backoff;
    this.authRefusals = authRefusals;
    this.context = context;
    this.handler = handler;
    this.renewal = new TokenRenewal(hello, keepAliveTimeout);
    this.connectTimeout = connectTimeout;
    this.keepAliveTime = keepAliveTime;
    this.keepAliveTimeout = keepAliveTimeout;
    this.waiters = waiters;
    this.opener = new SessionOpener(connector, scheduler, ticker, context, requestIds, hello, connectTimeout, inbound,
        this::connectTimedOut);
    this.mover = new Mover(new MoveSide(), context, scheduler, connectTimeout, opener, spent);
    this.redos = new Redo(handler, context, spent, backoff, s -> s == current && s.isActive(), this::moveAway);
  }

  /** The current session (connecting or active), or null. From any thread. */
  @Nullable Session current() {
    return current;
  }

  /** In the context: starts connecting. */
  void start() {
    scheduleConnect(Duration.ZERO);
  }

  /** In the context: whether the client is closed. */
  boolean isClosed() {
    return closed;
  }

  /**
   * In the context: stops reconnecting, drops a move, says goodbye to the spent sessions and
   * retires the current one, which the caller says goodbye to (or cancels). Null when there is
   * none, or the client was closed already.
   */
  @Nullable Closing close() {
    if (closed) {
      return null;
    }
    closed = true;
    Timer.cancel(attemptTimer);
    mover.abandon("client closed");
    spent.closeAll();
    Session s = current;
    current = null;
    Closing closing = s == null ? null : new Closing(s, s.isActive());
    if (s != null) {
      retire(s);
    }
    waiters.signal();
    return closing;
  }


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
    ServerAddress address = rotation.next();
    Session s = opener.newSession(address);
    current = s;
    log.debug("Connecting to {} ({})", address, s);
    RuntimeException failure = opener.openStream(s);
    if (failure != null) {
      current = null;
      attemptFailed(s, failure.toString());
      return;
    }
    opener.sayHello(s);
  }

  private void connectTimedOut(Session s) {
    if (mover.isStandby(s)) {
      mover.timedOut(s);
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

  /**
   * In the context: the server refused the hello of {@code s}. The attempt ends now (no welcome
   * will come); a refusal of its credentials is kept for the callers and waits the auth back-off.
   */
  private void helloRefused(Session s, RosterException refusal) {
    boolean credentials = AuthRefusals.isCredentials(refusal);
    String message = String.valueOf(refusal.getMessage());
    String why = "hello refused: " + refusal.code() + ": " + message;
    if (mover.isStandby(s) && mover.awaitsWelcome(s)) {
      mover.refused(s, why);
      return;
    }
    if (s != current || !s.isConnecting() || closed) {
      return;
    }
    current = null;
    retire(s);
    s.cancel(why);
    if (!credentials) {
      attemptFailed(s, why);
      return;
    }
    Duration delay = authRefusals.refused(s.address, refusal);
    waiters.signal();
    scheduleConnect(delay);
  }

  private void welcomed(Session s, SessionEvents.Welcomed welcome) {
    boolean asStandby = mover.awaitsWelcome(s);
    if ((s != current && !asStandby) || !s.isConnecting() || closed) {
      return;
    }
    opener.disarm(s);
    // Before the redo: the pushes it brings are judged by the warm-up. The server ends a session
    // that sends nothing for its keepalive time + timeout, so ping at least as often as it asks.
    long warmUpMs = s.welcomed(welcome, keepAliveTime.toNanos());
    if (warmUpMs > 0) {
      log.info("Roster server {} is warming up for {} ms more: removals are held back until then",
          s.address, warmUpMs);
    }
    List<CompletableFuture<Answer>> redo = redos.send(s, asStandby && !s.warming());
    if (asStandby) {
      mover.welcomed(s, welcome, redo);
      return;
    }
    activate(s, false);
    log.info("Connected to Roster server {} (connection {}, node {})",
        s.address, welcome.connectionId(), welcome.nodeId());
    redos.follow(s, redo);
  }

  /**
   * In the context: {@code s} (welcomed, redo sent) becomes the active session; the back-off starts
   * over now ({@code resetBackoff}) or once its redo was taken ({@link Redo#follow}).
   */
  private void activate(Session s, boolean resetBackoff) {
    opener.disarm(s);
    s.activate();
    if (resetBackoff) {
      backoff.reset();
    }
    failedAttempts = 0;
    outageLogged = false;
    authRefusals.welcomed();
    waiters.signal();
    if (keepalive != null) {
      keepalive.stop();
    }
    keepalive = new Keepalive(s, context, scheduler, ticker, keepAliveTimeout, () -> silent(s), () -> renewal.renew(s));
    keepalive.start();
  }

  /** From any thread: see {@link ConnectionManager#moveAway}. */
  void moveAway(Session s, String why) {
    context.execute(() -> reconnectAsked(s, why, ""));
  }

  /**
   * In the context: the server of {@code s} asks this client to move ({@code reconnect}), or a
   * change it refused does. A make-before-break move to the suggestion or the rest of the list
   * ({@link Mover}), or, with nowhere else to go, a goodbye and a new attempt.
   */
  private void reconnectAsked(Session s, String reason, String suggestedServer) {
    if (mover.isStandby(s)) {
      mover.reconnectAsked(s, reason);
      return;
    }
    if (s != current || closed || mover.isLeaving(s)) {
      return;
    }
    if (mover.retryPending() && suggestedServer.isEmpty()) {
      return; // a move found no server a moment ago; it is tried again after its back-off
    }
    log.info("Server {} asked this client to reconnect ({}){}", s.address,
        reason.isEmpty() ? "no reason given" : reason,
        suggestedServer.isEmpty() ? "" : "; trying " + suggestedServer + " first");
    ServerAddress leaving = s.address;
    ServerAddress proposal = rotation.proposal(suggestedServer, leaving);
    Set<ServerAddress> candidates = rotation.candidates(leaving, proposal);
    if (s.isActive() && !candidates.isEmpty()) {
      mover.begin(s, candidates, reason);
      return;
    }
    // Nowhere else to go (or not even welcomed here): break before make.
    boolean elsewhere = rotation.leave(leaving, proposal);
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
    waiters.signal();
    // Goodbye on the old session; its pending requests are answered or fail when it ends.
    s.halfClose();
    scheduleConnect(delay);
  }

  /** The make-before-break move. */
  Mover mover() {
    return mover;
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
        waiters.signal();
        if (!mover.handOver(s)) {
          scheduleConnect(backoff.next());
        }
      } else {
        attemptFailed(s, why);
      }
    } else if (mover.isStandby(s)) {
      mover.closed(s, why);
    } else {
      spent.forget(s);
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
    spent.spend(s);
    waiters.signal();
    if (!mover.handOver(s)) {
      scheduleConnect(backoff.next());
    }
  }

  private void attemptFailed(Session s, String why) {
    failedAttempts++;
    Duration delay = backoff.next();
    if (failedAttempts >= rotation.addresses().size() && !outageLogged) {
      outageLogged = true;
      log.warn("Cannot reach any Roster server of {} (last: {}: {}); retrying with back-off",
          rotation.addresses(), s.address, why);
    } else {
      log.debug("Could not connect to {}: {}; next attempt in {} ms", s.address, why,
          delay.toMillis());
    }
    scheduleConnect(delay);
  }

  /** In the context: {@code s} is over for this client; its timers stop. */
  private void retire(Session s) {
    s.retire();
    opener.disarm(s);
    if (keepalive != null && keepalive.session() == s) {
      keepalive.stop();
      keepalive = null;
    }
  }

  /** Runs {@code task} in the context after {@code delayNanos} of the scheduler's time. */
  private Timer schedule(Runnable task, long delayNanos) {
    return context.schedule(task, delayNanos, TimeUnit.NANOSECONDS, scheduler);
  }

  /** What the {@link Mover} may ask of this loop, in the context: it owns no reference to the loop itself. */
  private final class MoveSide implements Mover.Loop {

    @Override
    public boolean isActiveCurrent(Session s) {
      return !closed && s == current && s.isActive();
    }

    @Override
    public boolean isClosed() {
      return closed;
    }

    @Override
    public Duration backoffStep() {
      return atLeast(backoff.next(), backoff.initial());
    }

    @Override
    public void connectTo(@Nullable ServerAddress address) {
      rotation.suggest(address);
      scheduleConnect(Duration.ZERO);
    }

    @Override
    public void takeOver(Session s, boolean active) {
      current = s;
      if (active) {
        activate(s, true);
      }
    }

    @Override
    public void retire(Session s) {
      ConnectLoop.this.retire(s);
    }

    @Override
    public void moveAgain(Session s, String reason) {
      reconnectAsked(s, reason, "");
    }

    @Override
    public List<CompletableFuture<Answer>> reclaim(Session s) {
      return handler.reclaim(s);
    }
  }

  /** What the sessions' servers say, on their transport threads: each becomes a task of the context. */
  private final class Inbound implements SessionEvents {

    @Override
    public void welcomed(Session s, SessionEvents.Welcomed welcome) {
      context.execute(() -> ConnectLoop.this.welcomed(s, welcome));
    }

    @Override
    public void pushed(Session s, SessionEvents.Pushed push) {
      context.execute(() -> handler.onPush(s, push));
    }

    @Override
    public void reconnectAsked(Session s, String reason, String suggestedServer) {
      context.execute(() -> ConnectLoop.this.reconnectAsked(s, reason, suggestedServer));
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
    public void refused(Session s, RosterException refusal) {
      context.execute(() -> helloRefused(s, refusal));
    }

    @Override
    public void closed(Session s, String why) {
      context.execute(() -> streamClosed(s, why));
    }
  }
}
