package io.roster.client.internal;

import io.grpc.Status;
import io.roster.client.ClientClosedException;
import io.roster.client.RosterException;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Ping;
import io.roster.proto.v1.Push;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.Welcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one session open to one server of the list at a time.
 *
 * <p>Connecting sends {@code hello}; the session becomes active when the {@code welcome} arrives,
 * after the {@link Handler} redid the client's registrations and subscriptions on it (under the
 * lock, so no request can slip in between). When a session ends (error, completion, no welcome
 * within the connect timeout, no frame within the keepalive timeout after a ping), the next
 * server of the list is tried after a jittered exponential back-off, which starts over after
 * every welcome. A {@code reconnect} frame moves promptly: no back-off, to the suggested server
 * (or else the next one of the list); when the server that asked is the only choice, after one
 * back-off step of at least the initial delay, so as not to land on it again while it drains.
 * A welcome that says the server is warming up marks the session so ({@link Session#warming}),
 * until the time it gave or a {@code warm_up_done} frame.
 *
 * <p>All timers run on the injected scheduler and all time readings come from the injected
 * ticker, so the whole state machine runs on a fake clock in tests. State is guarded by the
 * client's lock, shared with the client so that the redo and the desired state change
 * atomically. Thread-safe.
 */
final class ConnectionManager {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  /** What the client does with sessions. */
  interface Handler {

    /** A session was welcomed. Called under the lock; send the redo on it. */
    void onWelcome(Session session);

    /** A push arrived. Called without the lock, in the stream's order; ack it. */
    void onPush(Session session, Push push);

    /** The session's server said its warm-up is over ({@code warm_up_done}). Called without the lock. */
    default void onWarmUpDone(Session session) {}
  }

  private final List<ServerAddress> addresses;
  private final Connector connector;
  private final ScheduledExecutorService scheduler;
  private final Ticker ticker;
  private final Backoff backoff;
  private final ReentrantLock lock;
  private final Condition activeChanged;
  private final Handler handler;
  private final Supplier<ClientFrame.Builder> hello;
  private final Supplier<String> requestIds;
  private final Duration connectTimeout;
  private final Duration keepAliveTime;
  private final Duration keepAliveTimeout;

  // Guarded by lock.
  private int nextIndex;
  private ServerAddress suggested;
  private Session current;
  private ScheduledFuture<?> connectTimer;
  private long sessionIds;
  private int failedAttempts;
  private boolean outageLogged;
  private boolean closed;

  ConnectionManager(
      List<ServerAddress> addresses,
      Connector connector,
      ScheduledExecutorService scheduler,
      Ticker ticker,
      Backoff backoff,
      ReentrantLock lock,
      Handler handler,
      Supplier<ClientFrame.Builder> hello,
      Supplier<String> requestIds,
      Duration connectTimeout,
      Duration keepAliveTime,
      Duration keepAliveTimeout) {
    this.addresses = List.copyOf(addresses);
    this.connector = connector;
    this.scheduler = scheduler;
    this.ticker = ticker;
    this.backoff = backoff;
    this.lock = lock;
    this.activeChanged = lock.newCondition();
    this.handler = handler;
    this.hello = hello;
    this.requestIds = requestIds;
    this.connectTimeout = connectTimeout;
    this.keepAliveTime = keepAliveTime;
    this.keepAliveTimeout = keepAliveTimeout;
  }

  /** Starts connecting (on the scheduler). */
  void start() {
    lock.lock();
    try {
      scheduleConnect(Duration.ZERO);
    } finally {
      lock.unlock();
    }
  }

  /** The active session, or null. Call with the lock held for a stable answer. */
  Session activeSession() {
    lock.lock();
    try {
      Session s = current;
      return s != null && s.state == Session.State.ACTIVE ? s : null;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits (real time) until a session is active.
   *
   * @return the active session, or null when none became active within {@code timeout}
   * @throws ClientClosedException when the client is or gets closed
   */
  Session awaitActive(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (true) {
        if (closed) {
          throw new ClientClosedException("the Roster client is closed");
        }
        if (current != null && current.state == Session.State.ACTIVE) {
          return current;
        }
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return null;
        }
        activeChanged.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RosterException(RosterException.Code.UNAVAILABLE,
          "interrupted while waiting for a connection");
    } finally {
      lock.unlock();
    }
  }

  /** Servers in the order a one-off call should try them: the connected (or next) one first. */
  List<ServerAddress> addressesInPreferredOrder() {
    lock.lock();
    try {
      ServerAddress first = current != null ? current.address
          : suggested != null ? suggested : addresses.get(nextIndex);
      List<ServerAddress> order = new ArrayList<>(addresses.size() + 1);
      order.add(first);
      for (int i = 0; i < addresses.size(); i++) {
        ServerAddress a = addresses.get((nextIndex + i) % addresses.size());
        if (!a.equals(first)) {
          order.add(a);
        }
      }
      return order;
    } finally {
      lock.unlock();
    }
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
    Session s;
    boolean wasActive;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      cancel(connectTimer);
      s = current;
      current = null;
      wasActive = s != null && s.state == Session.State.ACTIVE;
      if (s != null) {
        retire(s);
      }
      activeChanged.signalAll();
    } finally {
      lock.unlock();
    }
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

  // ---- state machine (all under lock) ----

  private void scheduleConnect(Duration delay) {
    if (closed) {
      return;
    }
    cancel(connectTimer);
    connectTimer = scheduler.schedule(this::connect, delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void connect() {
    lock.lock();
    try {
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
        s.attach(connector.openSession(address, new Inbound(s)));
      } catch (RuntimeException e) {
        current = null;
        s.ended(new Session.SessionLostException("could not open a session: " + e));
        attemptFailed(s, e.toString());
        return;
      }
      s.send(hello.get().setRequestId(requestIds.get()).build());
      s.connectTimer = scheduler.schedule(() -> connectTimedOut(s),
          connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
    } finally {
      lock.unlock();
    }
  }

  private void connectTimedOut(Session s) {
    lock.lock();
    try {
      if (s != current || s.state != Session.State.CONNECTING) {
        return;
      }
      current = null;
      retire(s);
      s.cancel("no welcome within " + connectTimeout.toMillis() + " ms");
      attemptFailed(s, "no welcome within " + connectTimeout.toMillis() + " ms");
    } finally {
      lock.unlock();
    }
  }

  private void welcomed(Session s, Welcome welcome) {
    lock.lock();
    try {
      if (s != current || s.state != Session.State.CONNECTING || closed) {
        return;
      }
      cancel(s.connectTimer);
      s.connectionId = welcome.getConnectionId();
      s.features = Set.copyOf(welcome.getFeaturesList());
      long warmUpMs = Math.min(welcome.getWarmUpRemainingMs(), Session.MAX_WARM_UP_MS);
      if (warmUpMs > 0) {
        // Before the redo: the pushes it brings are judged by it.
        s.warmUpEndsAtNanos = ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmUpMs);
        s.warming = true;
        log.info("Roster server {} is warming up for {} ms more: removals are held back until then",
            s.address, warmUpMs);
      }
      try {
        handler.onWelcome(s);
      } catch (RuntimeException e) {
        log.warn("Redo on {} failed; it continues on the next connection", s.address, e);
      }
      s.state = Session.State.ACTIVE;
      backoff.reset();
      failedAttempts = 0;
      outageLogged = false;
      log.info("Connected to Roster server {} (connection {}, node {})",
          s.address, welcome.getConnectionId(), welcome.getNodeId());
      activeChanged.signalAll();
      // The server ends a session that sends nothing for its keepalive time + timeout, so
      // ping at least as often as it asks.
      long serverTime = TimeUnit.MILLISECONDS.toNanos(welcome.getKeepaliveTimeMs());
      s.pingIntervalNanos = serverTime > 0 ? Math.min(serverTime, keepAliveTime.toNanos()) : keepAliveTime.toNanos();
      scheduleKeepAlive(s, s.pingIntervalNanos);
    } finally {
      lock.unlock();
    }
  }

  private void reconnectRequested(Session s, Reconnect reconnect) {
    lock.lock();
    try {
      if (s != current || closed) {
        return;
      }
      log.info("Server {} asked this client to reconnect ({}){}", s.address,
          reconnect.getReason().isEmpty() ? "no reason given" : reconnect.getReason(),
          reconnect.getSuggestedServer().isEmpty()
              ? "" : "; trying " + reconnect.getSuggestedServer() + " first");
      ServerAddress leaving = s.address;
      suggested = null;
      if (!reconnect.getSuggestedServer().isEmpty()) {
        try {
          ServerAddress proposal = ServerAddress.parse(reconnect.getSuggestedServer());
          suggested = proposal.equals(leaving) ? null : proposal;
        } catch (RosterException e) {
          log.warn("Ignoring an unusable suggested server '{}'", reconnect.getSuggestedServer());
        }
      }
      if (suggested == null && addresses.get(nextIndex).equals(leaving)) {
        nextIndex = (nextIndex + 1) % addresses.size(); // the next address, not the leaving one
      }
      boolean elsewhere = suggested != null || !addresses.get(nextIndex).equals(leaving);
      current = null;
      retire(s);
      activeChanged.signalAll();
      // Goodbye on the old session; its pending requests are answered or fail when it ends.
      s.halfClose();
      // Promptly to another server. When the leaving one is the only choice, reconnecting at
      // once would only reach it again while it drains: wait at least one initial back-off.
      scheduleConnect(elsewhere ? Duration.ZERO : atLeast(backoff.next(), backoff.initial()));
    } finally {
      lock.unlock();
    }
  }

  private static Duration atLeast(Duration d, Duration min) {
    return d.compareTo(min) < 0 ? min : d;
  }

  private void streamClosed(Session s, Throwable error) {
    String why = describe(error);
    lock.lock();
    try {
      if (s == current) {
        boolean wasActive = s.state == Session.State.ACTIVE;
        current = null;
        retire(s);
        if (wasActive) {
          log.info("Disconnected from Roster server {}: {}", s.address, why);
          activeChanged.signalAll();
          scheduleConnect(backoff.next());
        } else {
          attemptFailed(s, why);
        }
      }
    } finally {
      lock.unlock();
    }
    s.ended(new Session.SessionLostException("session to " + s.address + " ended: " + why));
  }

  private void keepAliveTick(Session s) {
    lock.lock();
    try {
      if (s != current || s.state != Session.State.ACTIVE) {
        return;
      }
      long now = ticker.nanoTime();
      if (s.pingOutstanding) {
        if (s.framesReceived.get() > s.framesAtPing) {
          s.pingOutstanding = false;
        } else {
          long waited = now - s.pingSentAtNanos;
          if (waited >= keepAliveTimeout.toNanos()) {
            log.info("Roster server {} sent nothing within {} ms of a ping; reconnecting",
                s.address, keepAliveTimeout.toMillis());
            current = null;
            retire(s);
            s.cancel("keepalive timeout");
            activeChanged.signalAll();
            scheduleConnect(backoff.next());
            return;
          }
          scheduleKeepAlive(s, keepAliveTimeout.toNanos() - waited);
          return;
        }
      }
      // Idle in either direction: nothing heard (is the server there?) or nothing said (the
      // server would take the silence for a dead client).
      long idle = now - Math.min(s.lastReceivedNanos, s.lastSentNanos);
      if (idle >= s.pingIntervalNanos) {
        s.pingOutstanding = true;
        s.pingSentAtNanos = now;
        s.framesAtPing = s.framesReceived.get();
        s.send(ClientFrame.newBuilder()
            .setRequestId(requestIds.get())
            .setPing(Ping.getDefaultInstance())
            .build());
        // Back by the next ping time or the timeout, whichever comes first.
        scheduleKeepAlive(s, Math.min(keepAliveTimeout.toNanos(), s.pingIntervalNanos));
      } else {
        scheduleKeepAlive(s, s.pingIntervalNanos - idle);
      }
    } finally {
      lock.unlock();
    }
  }

  private void scheduleKeepAlive(Session s, long delayNanos) {
    s.keepAliveTimer = scheduler.schedule(() -> keepAliveTick(s), delayNanos,
        TimeUnit.NANOSECONDS);
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

  private void retire(Session s) {
    s.state = Session.State.CLOSED;
    cancel(s.connectTimer);
    cancel(s.keepAliveTimer);
  }

  private static void cancel(ScheduledFuture<?> f) {
    if (f != null) {
      f.cancel(false);
    }
  }

  private static String describe(Throwable error) {
    if (error == null) {
      return "the server ended the session";
    }
    Status status = Status.fromThrowable(error);
    return status.getDescription() == null
        ? status.getCode().toString()
        : status.getCode() + ": " + status.getDescription();
  }

  /** Routes one stream's callbacks. */
  private final class Inbound implements SessionStream.Listener {
    private final Session s;

    Inbound(Session s) {
      this.s = s;
    }

    @Override
    public void onFrame(ServerFrame frame) {
      s.lastReceivedNanos = ticker.nanoTime();
      s.framesReceived.incrementAndGet();
      try {
        switch (frame.getFrameCase()) {
          case WELCOME -> welcomed(s, frame.getWelcome());
          case RESULT -> s.complete(frame.getRequestId(), frame.getResult());
          case PUSH -> handler.onPush(s, frame.getPush());
          case RECONNECT -> reconnectRequested(s, frame.getReconnect());
          case WARM_UP_DONE -> {
            if (s.warming) {
              s.warming = false;
              handler.onWarmUpDone(s);
            }
          }
          case PONG -> { }
          default -> log.debug("Ignoring an unknown frame from {}: {}", s.address,
              frame.getFrameCase());
        }
      } catch (RuntimeException e) {
        log.warn("Failed to handle a {} frame from {}", frame.getFrameCase(), s.address, e);
      }
    }

    @Override
    public void onClose(Throwable error) {
      streamClosed(s, error);
    }
  }
}
