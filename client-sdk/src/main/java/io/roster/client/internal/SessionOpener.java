package io.roster.client.internal;

import io.roster.client.internal.SerialContext.Timer;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Opens the client's sessions: numbers them, opens their streams (whose events go to the
 * connection manager's {@link SessionEvents}), says hello with a session sequence that only grows,
 * and owns the connect timer of each session opened and not yet active (the current one, a move's
 * standby): when it fires, the session is handed to {@code onConnectTimeout}.
 *
 * <p>Owned by the {@link ConnectionManager}, which hands it to its {@link Mover}. Used only in
 * the client's {@link SerialContext}; not thread-safe.
 */
final class SessionOpener {

  private final Connector connector;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final SerialContext context;
  private final Supplier<String> requestIds;
  private final Supplier<Request.Hello> hello;
  private final Duration connectTimeout;
  private final SessionEvents events;
  private final Consumer<Session> onConnectTimeout;

  /** The connect timeout of each session opened and not yet active (the current one, a move's standby). */
  private final IdentityHashMap<Session, Timer> connectTimers = new IdentityHashMap<>();
  private long sessionIds;
  private long lastSessionSeq;

  SessionOpener(Connector connector, ScheduledExecutorService scheduler, Ticker ticker, SerialContext context,
      Supplier<String> requestIds, Supplier<Request.Hello> hello, Duration connectTimeout, SessionEvents events,
      Consumer<Session> onConnectTimeout) {
    this.connector = connector;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.context = context;
    this.requestIds = requestIds;
    this.hello = hello;
    this.connectTimeout = connectTimeout;
    this.events = events;
    this.onConnectTimeout = onConnectTimeout;
  }

  /** In the context: a new session to {@code address}, its stream not open yet. */
  Session newSession(ServerAddress address) {
    return new Session(++sessionIds, address, scheduler, requestIds, ticker);
  }

  /**
   * In the context: opens the stream of {@code s}, whose events come back to the context.
   *
   * @return null, or why it could not be opened (then {@code s} is ended)
   */
  @Nullable RuntimeException openStream(Session s) {
    try {
      s.attach(connector.openSession(s.address, s.inbound(events)));
      return null;
    } catch (RuntimeException e) {
      s.ended(new Session.SessionLostException("could not open a session: " + e));
      return e;
    }
  }

  /** Sends hello on a session just opened and starts its connect timer. In the context. */
  void sayHello(Session s) {
    // Grows with every session, also across restarts of a client with a fixed id: the wall
    // clock in µs, kept increasing. The server lets a newer session's registration win.
    lastSessionSeq = Math.max(lastSessionSeq + 1, ticker.currentTimeMillis() * 1000);
    Request.Hello h = hello.get().withSessionSeq(lastSessionSeq);
    s.token(h.token());
    s.send(h);
    armConnectTimeout(s);
  }

  /**
   * In the context: {@code s} must be active within the connect timeout from now (welcomed, and,
   * for a move's standby, its redo answered), or it is given up.
   */
  void armConnectTimeout(Session s) {
    Timer.cancel(connectTimers.put(s, context.schedule(() -> onConnectTimeout.accept(s), connectTimeout.toNanos(),
        TimeUnit.NANOSECONDS, scheduler)));
  }

  /** In the context: stops the connect timer of {@code s}, if it has one. */
  void disarm(Session s) {
    Timer.cancel(connectTimers.remove(s));
  }
}
