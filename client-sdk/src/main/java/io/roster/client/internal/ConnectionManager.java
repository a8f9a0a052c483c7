package io.roster.client.internal;

import io.roster.client.ClientClosedException;
import io.roster.client.RosterException;
import java.time.Duration;
import java.util.List;
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
 * for are handed to it. The state machine is its {@link ConnectLoop}, which owns the {@link Mover};
 * the Mover asks the loop only through {@link Mover.Loop}. This class is the loop's face to the
 * client's other parts. Thread-safe: {@link #activeSession} and {@link #addressesInPreferredOrder} read from any
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

  private final ServerRotation rotation;
  private final SerialContext context;
  /** Callers waiting for the active session to change ({@link #awaitActiveOtherThan}). */
  private final ActiveWaiters waiters;
  /** The state machine, changed only in the context. */
  private final ConnectLoop loop;
  /** Hellos refused for their credentials: the last refusal and the auth back-off. */
  private final AuthRefusals authRefusals;

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
    this.context = context;
    this.waiters = new ActiveWaiters(context);
    this.authRefusals = new AuthRefusals(authBackoff, AUTH_BACKOFF_MAX);
    this.loop = new ConnectLoop(rotation, connector, scheduler, ticker, backoff, authRefusals, context, handler, hello, requestIds, connectTimeout,
        keepAliveTime, keepAliveTimeout, waiters);
  }

  /** Starts connecting (on the scheduler). */
  void start() {
    context.execute(loop::start);
  }

  /** The active session, or null. From any thread; in the context, the current answer. */
  @Nullable Session activeSession() {
    Session s = loop.current();
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
      if (loop.isClosed()) {
        throw new ClientClosedException("the Roster client is closed");
      }
      Session current = loop.current();
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
    Session s = loop.current();
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
    ConnectLoop.Closing closing = context.call(loop::close);
    if (closing == null) {
      return;
    }
    Session s = closing.session();
    if (closing.active()) {
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

  /**
   * The server of {@code s} answered a change with UNAVAILABLE (a cluster member that cannot
   * take writes, or is catching up): move to another server as if it had sent {@code reconnect}
   * (make-before-break), so that the redo there applies what this one refused.
   */
  void moveAway(Session s, String why) {
    loop.moveAway(s, why);
  }

  /**
   * Right after a change of desired state was sent on the active session: while a move's standby
   * has its redo out, the change goes there too (the redo predates it), and the move waits for
   * its result like for the redo's unless {@code awaited} is false. In the context, in the task
   * that sent the change, so that changes reach both sessions in the same order.
   */
  void sendToStandby(Request request, Duration timeout, String what, boolean awaited) {
    loop.mover().sendToStandby(request, timeout, what, awaited);
  }

  /** The standby session of a move in progress, or null. For tests. */
  @Nullable Session standbySession() {
    return context.call(loop.mover()::standby);
  }
}
