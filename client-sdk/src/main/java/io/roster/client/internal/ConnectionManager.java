package io.roster.client.internal;

import io.roster.client.ClientClosedException;
import io.roster.client.RosterException;
import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connect and keepalive loop: keeps one session open to one server of the list at a time
 * (two, briefly, while the {@link Mover} moves the client to another server, make-before-break).
 *
 * <p>Connecting sends {@code hello}; the session becomes active when the {@code welcome} arrives,
 * after the {@link Handler} redid the client's registrations and subscriptions on it (in the
 * same task of the client's {@link SerialContext}, so no request can slip in between). When a
 * session ends (error, completion, no welcome within the connect timeout, no frame within the
 * keepalive timeout after a ping: {@link Keepalive}), the next server of the list is tried after
 * a jittered exponential back-off, which starts over after every welcome whose redo the server
 * took. A welcome that says the server is warming up marks the session so
 * ({@link Session#warming}), until the time it gave or a {@code warm_up_done} frame.
 *
 * <p>A hello the server refuses with UNAUTHENTICATED or PERMISSION_DENIED (a missing, unknown,
 * expired or removed token) is no outage: the session is given up at once, the refusal is kept
 * and thrown, with its code, by every call that waits for a connection ({@link #awaitActive}) until
 * a session is welcomed, it is logged at WARN once (and again only when its message changes), and
 * the next attempt waits the {@linkplain #AUTH_BACKOFF_MAX auth back-off}, from 1 s doubling to
 * 30 s, never under half of its step, instead of the reconnect back-off: a client with a bad token
 * alone stays under the server's budget of bad credentials per address (ten a minute), and the
 * next attempt sends the token supplier's answer of that moment. Other refusals of the hello (a
 * malformed one, a limit) end the attempt at once too, with the reconnect back-off.
 *
 * <p>A {@code reconnect} frame, or a change the server answered UNAVAILABLE, hands the session to
 * the {@link Mover} with the candidates to move to. When the leaving server is the only choice,
 * there is no move: the goodbye goes out at once and the next attempt waits one back-off step
 * of at least the initial delay, so as not to land on the server again while it drains.
 * Sessions that may still own some of the client's instances on their servers (a standby that
 * failed after its redo went out, a silent session given up by the keepalive) are kept
 * <em>spent</em>, open without keepalive, until a later session's redo has been taken
 * (decision 47).
 *
 * <p>All timers run on the injected scheduler and all time readings come from the injected
 * ticker, so the whole state machine runs on a fake clock in tests. State is changed only by
 * tasks of the client's {@link SerialContext}, where the redo and every change of the desired
 * state run too, so that they never interleave: stream events, timers and the answers it waits
 * for are handed to it. This class owns its {@link Mover}, which asks it only through
 * {@link Mover.Loop}.
 * Thread-safe: {@link #activeSession} and {@link #addressesInPreferredOrder} read from any
 * thread; the blocking waits ({@link #awaitActive}, {@link #close}) wait outside the context.
 */
final class ConnectionManager {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  /** The first step of the back-off after a hello refused for its credentials. */
  static final Duration AUTH_BACKOFF_INITIAL = Duration.ofSeconds(1);
  /** The longest step of the back-off after a hello refused for its credentials. */
  static final Duration AUTH_BACKOFF_MAX = Duration.ofSeconds(30);

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

  /** Which server the next attempt goes to. */
  private final ServerRotation rotation;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Backoff backoff;
  private final SerialContext context;
  private final Handler handler;
  private final Supplier<Request.Hello> hello;
  private final Duration connectTimeout;
  private final Duration keepAliveTime;
  private final Duration keepAliveTimeout;
  private final Inbound inbound = new Inbound();
  /** Callers waiting for the active session to change ({@link #awaitActiveOtherThan}). */
  private final ActiveWaiters waiters;

  // Changed only in the context. Volatile where read outside it (activeSession,
  // addressesInPreferredOrder).
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
  private int failedAttempts;
  private boolean outageLogged;
  /** Hellos refused for their credentials: the last refusal and the auth back-off. */
  private final AuthRefusals authRefusals;
  private boolean closed;

  ConnectionManager(
      List<ServerAddress> addresses,
      Connector connector,
      ScheduledExecutorService scheduler,
      Ticker ticker,
      Backoff backoff,
      Backoff authBackoff,
      SerialContext context,
      Handler handler,
      Supplier<Request.Hello> hello,
      Supplier<String> requestIds,
      Duration connectTimeout,
      Duration keepAliveTime,
      Duration keepAliveTimeout) {
    this.rotation = new ServerRotation(addresses);
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.backoff = backoff;
    this.authRefusals = new AuthRefusals(authBackoff, AUTH_BACKOFF_MAX);
    this.context = context;
    this.handler = handler;
    this.hello = hello;
    this.connectTimeout = connectTimeout;
    this.keepAliveTime = keepAliveTime;
    this.keepAliveTimeout = keepAliveTimeout;
    this.waiters = new ActiveWaiters(context);
    this.opener = new SessionOpener(connector, scheduler, ticker, context, requestIds, hello, connectTimeout, inbound,
        this::connectTimedOut);
    this.mover = new Mover(new MoveSide(), context, scheduler, connectTimeout, opener, spent);
  }

  /** Starts connecting (on the scheduler). */
  void start() {
    context.execute(() -> scheduleConnect(Duration.ZERO));
  }

  /** The active session, or null. From any thread; in the context, the current answer. */
  @Nullable Session activeSession() {
    Session s = current;
    return s != null && s.isActive() ? s : null;
  }

  /**
   * Waits (real time) until a session is active.
   *
   * @return the active session, or null when none became active within {@code timeout}
   * @throws ClientClosedException when the client is or gets closed
   * @throws RosterException UNAUTHENTICATED or PERMISSION_DENIED when the last hello was refused
   *     for its credentials, or is while waiting
   */
  @Nullable Session awaitActive(Duration timeout) {
    return awaitActiveOtherThan(null, timeout);
  }

  /**
   * Waits for an active session other than {@code not} (one that refused a change with
   * UNAVAILABLE: the client is moving away from it); null on timeout.
   */
  @Nullable Session awaitActiveOtherThan(@Nullable Session not, Duration timeout) {
    return waiters.await(timeout, () -> {
      if (closed) {
        throw new ClientClosedException("the Roster client is closed");
      }
      if (current != null && current.isActive() && current != not) {
        return current;
      }
      RosterException refused = authRefusals.refusal();
      if (refused != null) {
        throw refused;
      }
      return null;
    });
  }

  /**
   * Returns once every task added to the client's context before this call has run. For tests
   * that play the transport or the clock on their own thread: an event or a timer is added to the
   * context without waiting for it when another thread runs the queue.
   */
  void settle() {
    context.run(() -> { });
  }

  /** Servers in the order a one-off call should try them: the connected (or next) one first. */
  List<ServerAddress> addressesInPreferredOrder() {
    // Read outside the context: a hint, whose parts may be a moment apart.
    Session s = current;
    return rotation.preferredOrder(s != null ? s.address : null);
  }

  /** The configured servers. */
  List<ServerAddress> addresses() {
    return rotation.addresses();
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
      mover.abandon("client closed");
      spent.closeAll();
      Session s = current;
      closing[0] = s;
      current = null;
      boolean active = s != null && s.isActive();
      if (s != null) {
        retire(s);
      }
      waiters.signal();
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
    List<CompletableFuture<Answer>> redo = List.of();
    try {
      redo = handler.onWelcome(s, asStandby && !s.warming());
    } catch (RuntimeException e) {
      log.warn("Redo on {} failed; it continues on the next connection", s.address, e);
    }
    if (asStandby) {
      mover.welcomed(s, welcome, redo);
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

  /**
   * In the context: {@code s} (welcomed, redo sent) becomes the active session; the back-off starts
   * over now ({@code resetBackoff}) or once its redo was taken ({@link #afterRedo}).
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
    keepalive = new Keepalive(s, context, scheduler, ticker, keepAliveTimeout, () -> silent(s), () -> renew(s));
    keepalive.start();
  }

  /**
   * In the context: once the redo just sent on {@code s} is answered, the spent sessions get
   * their goodbye, and, if the server took it, the back-off starts over (a server that welcomes
   * the client but refuses its redo, a cluster member whose log commits nothing, sends it
   * elsewhere with a growing delay, not every initial back-off step).
   */
  private void afterRedo(Session s, List<CompletableFuture<Answer>> redo) {
    List<Session> leaving = spent.takeAll();
    CompletableFuture.allOf(redo.toArray(CompletableFuture[]::new)).whenComplete((done, error) -> {
      boolean taken = error == null
          && redo.stream().noneMatch(f -> f.join().unavailable());
      context.execute(() -> {
        if (!taken) {
          // This server holds nothing yet: the spent sessions may still hold the instances.
          leaving.forEach(spent::spend);
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
    ServerAddress proposal = null;
    if (!suggestedServer.isEmpty()) {
      try {
        proposal = ServerAddress.parse(suggestedServer);
        proposal = proposal.equals(leaving) ? null : proposal;
      } catch (RosterException e) {
        log.warn("Ignoring an unusable suggested server '{}'", suggestedServer);
      }
    }
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

  /**
   * Right after a change of desired state was sent on the active session: while a move's standby
   * has its redo out, the change goes there too (the redo predates it), and the move waits for
   * its result like for the redo's unless {@code awaited} is false. In the context, in the task
   * that sent the change, so that changes reach both sessions in the same order.
   */
  void sendToStandby(Request request, Duration timeout, String what, boolean awaited) {
    mover.sendToStandby(request, timeout, what, awaited);
  }

  /** The standby session of a move in progress, or null. For tests. */
  @Nullable Session standbySession() {
    return context.call(mover::standby);
  }

  /**
   * In the context, at each keepalive tick: when the token supplier's answer changed, gives it to
   * the open session {@code s} (a {@code credentials} frame, same identity) instead of reconnecting.
   */
  private void renew(Session s) {
    if (!s.supports(Session.FEATURE_CREDENTIALS)) {
      return;
    }
    String now = hello.get().token();
    if (now.equals(s.token())) {
      return;
    }
    s.token(now);
    s.request(new Request.Credentials(now), keepAliveTimeout).whenComplete((answer, failed) -> {
      if (failed == null && !answer.ok()) {
        log.warn("Roster server {} refused the renewed token: {}", s.address, answer.message());
      }
    });
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
      ConnectionManager.this.retire(s);
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
      context.execute(() -> ConnectionManager.this.welcomed(s, welcome));
    }

    @Override
    public void pushed(Session s, SessionEvents.Pushed push) {
      context.execute(() -> handler.onPush(s, push));
    }

    @Override
    public void reconnectAsked(Session s, String reason, String suggestedServer) {
      context.execute(() -> ConnectionManager.this.reconnectAsked(s, reason, suggestedServer));
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
