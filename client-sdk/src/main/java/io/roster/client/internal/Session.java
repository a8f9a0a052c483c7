package io.roster.client.internal;

import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One attempt at a session: a stream to one server, its state, and the requests waiting for
 * their {@code result}. Writes are serialised here. The transport side of the client: it turns
 * {@link Request}s into frames and the frames it receives into {@link Answer}s (completing its
 * requests) and {@link SessionEvents} ({@link #inbound}), through {@link ProtoMapper}. Its
 * state is its own: the connection manager changes it through methods, in the client's serial
 * context; {@link #request} and {@link #send} may be called from any thread.
 */
final class Session {

  private static final Logger log = LoggerFactory.getLogger(Session.class);

  /** Lifecycle of a session. */
  enum State {
    /**
     * Hello sent, no welcome yet; or the standby of a move, welcomed, whose redo is not all
     * answered yet (requests do not use it: {@link ConnectionManager}).
     */
    CONNECTING,
    /** Welcomed and redone: requests may be sent. */
    ACTIVE,
    /** Over; nothing more is sent. */
    CLOSED
  }

  /** Thrown into waiting requests when their session ends before answering. */
  static final class SessionLostException extends Exception {
    private static final long serialVersionUID = 1L;

    SessionLostException(String message) {
      super(message, null, false, false);
    }
  }

  /** The longest warm-up a server's word is taken for (the server's own limit). */
  static final long MAX_WARM_UP_MS = 60_000;

  /** The welcome feature for {@code query} frames. */
  static final String FEATURE_QUERY = "query";

  /** The hello (and welcome) feature of delta pushes: this client applies them. */
  static final String FEATURE_DELTA = "delta";

  /** The server takes a {@code credentials} frame: a renewed token without reconnecting. */
  static final String FEATURE_CREDENTIALS = "credentials";

  final long id;
  final ServerAddress address;
  private final ScheduledExecutorService scheduler;
  private final Supplier<String> requestIds;
  private final Ticker ticker;
  private final Map<String, Pending> pending = new ConcurrentHashMap<>();
  private final Object expiryLock = new Object();
  private @Nullable ScheduledFuture<?> expiryTimer; // guarded by expiryLock
  private long expiryAt;                  // guarded by expiryLock
  private final CompletableFuture<Void> ended = new CompletableFuture<>();
  private @Nullable SessionStream stream;

  // What the server said, and where the session is in its life: changed through the methods
  // below, by the connection manager in the client's serial context; volatile for the readers
  // elsewhere (requests, queries, the hold).
  private volatile State state = State.CONNECTING;
  private volatile String connectionId = "";
  /** Optional frames the server answers, from its welcome. */
  private volatile Set<String> features = Set.of();
  private String token = "";
  /** The request id of the hello sent on this session; a result with it is the hello's refusal. */
  private volatile String helloRequestId = "";
  /** Ping when nothing was sent or received for this long: the lesser of ours and the server's. */
  private volatile long pingIntervalNanos;
  /**
   * The server said in its welcome that it is warming up, and has not said {@code
   * warm_up_done} yet; until {@link #warmUpEndsAtNanos} (ticker time).
   */
  private volatile boolean warming;
  private volatile long warmUpEndsAtNanos;

  /** Frames received so far; counted by the inbound thread. */
  private final AtomicLong framesReceived = new AtomicLong();

  /** Ticker reading of the last frame received; written by the inbound thread. */
  private volatile long lastReceivedNanos;

  /** Ticker reading of the last frame sent; the server ends sessions that stay silent. */
  private volatile long lastSentNanos;

  Session(long id, ServerAddress address, ScheduledExecutorService scheduler,
      Supplier<String> requestIds, Ticker ticker) {
    this.id = id;
    this.address = address;
    this.scheduler = scheduler;
    this.requestIds = requestIds;
    this.ticker = ticker;
    this.lastReceivedNanos = ticker.nanoTime();
    this.lastSentNanos = lastReceivedNanos;
  }

  /**
   * Takes what the welcome says: the connection id, the features, the warm-up (at most
   * {@link #MAX_WARM_UP_MS}) and the ping interval, the lesser of {@code pingIntervalNanos} and
   * the server's keepalive time (the server ends a session that sends nothing for its keepalive
   * time and timeout).
   *
   * @return the warm-up the server announced, in ms; 0 when it is warm
   */
  long welcomed(SessionEvents.Welcomed welcome, long pingIntervalNanos) {
    connectionId = welcome.connectionId();
    features = welcome.features();
    long warmUpMs = Math.min(welcome.warmUpRemainingMs(), MAX_WARM_UP_MS);
    if (warmUpMs > 0) {
      warmUpEndsAtNanos = ticker.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmUpMs);
      warming = true;
    }
    long serverTime = TimeUnit.MILLISECONDS.toNanos(welcome.keepaliveTimeMs());
    this.pingIntervalNanos = serverTime > 0 ? Math.min(serverTime, pingIntervalNanos) : pingIntervalNanos;
    return Math.max(0, warmUpMs);
  }

  /** The server said {@code warm_up_done}: returns whether it was warming up until now. */
  boolean warmUpDone() {
    boolean was = warming;
    warming = false;
    return was;
  }

  /** Whether the server said it is warming up and has not said it is done. */
  boolean warming() {
    return warming;
  }

  /** Welcomed and redone: requests may use it. */
  boolean isActive() {
    return state == State.ACTIVE;
  }

  /** Hello sent, not yet active (or the standby of a move). */
  boolean isConnecting() {
    return state == State.CONNECTING;
  }

  /** Over: nothing more is sent by the client's parts. */
  boolean isClosed() {
    return state == State.CLOSED;
  }

  /** It becomes the active session. */
  void activate() {
    state = State.ACTIVE;
  }

  /** It is over for the client, whether or not its stream is. */
  void retire() {
    state = State.CLOSED;
  }

  /** The server's id of the connection, from its welcome; empty before. */
  String connectionId() {
    return connectionId;
  }

  /** See {@link #welcomed}. */
  long pingIntervalNanos() {
    return pingIntervalNanos;
  }

  /** Frames received so far. */
  long framesReceived() {
    return framesReceived.get();
  }

  /** Ticker reading of the last frame received. */
  long lastReceivedNanos() {
    return lastReceivedNanos;
  }

  /** Ticker reading of the last frame sent. */
  long lastSentNanos() {
    return lastSentNanos;
  }

  /** How much longer this session's server is warming up; 0 or less when it is warm. */
  long warmUpLeftNanos(long now) {
    return warming ? warmUpEndsAtNanos - now : 0;
  }

  boolean supports(String feature) {
    return features.contains(feature);
  }

  /** The token this session presented last (its hello's, or a renewal's). In the context. */
  String token() {
    return token;
  }

  void token(String value) {
    token = value;
  }

  void attach(SessionStream s) {
    this.stream = s;
  }

  /** The stream; a session that is not ended has one ({@link ConnectionManager#openStream}). */
  private SessionStream attached() {
    return Objects.requireNonNull(stream, "no stream attached");
  }

  /**
   * Reads the frames of this session's stream: counts them, completes the requests their
   * results answer, and tells {@code events} the rest in the client's terms.
   */
  SessionStream.Listener inbound(SessionEvents events) {
    return new SessionStream.Listener() {
      @Override
      public void onFrame(ServerFrame frame) {
        lastReceivedNanos = ticker.nanoTime();
        framesReceived.incrementAndGet();
        try {
          switch (frame.getFrameCase()) {
            case WELCOME -> events.welcomed(Session.this, ProtoMapper.fromProto(frame.getWelcome()));
            case RESULT -> {
              if (!frame.getResult().getOk() && !frame.getRequestId().isEmpty()
                  && frame.getRequestId().equals(helloRequestId)) {
                events.refused(Session.this, ProtoMapper.answer(frame.getResult()).toException());
              } else {
                complete(frame.getRequestId(), frame.getResult());
              }
            }
            case PUSH -> pushed(events, frame);
            case RECONNECT -> {
              Reconnect r = frame.getReconnect();
              events.reconnectAsked(Session.this, r.getReason(), r.getSuggestedServer());
            }
            case WARM_UP_DONE -> events.warmUpDone(Session.this);
            case PONG -> { }
            default -> log.debug("Ignoring an unknown frame from {}: {}", address, frame.getFrameCase());
          }
        } catch (RuntimeException e) {
          log.warn("Failed to handle a {} frame from {}", frame.getFrameCase(), address, e);
        }
      }

      @Override
      public void onClose(@Nullable Throwable error) {
        events.closed(Session.this, ProtoMapper.describe(error));
      }
    };
  }

  private void pushed(SessionEvents events, ServerFrame frame) {
    SessionEvents.Pushed push;
    try {
      push = ProtoMapper.fromProto(frame.getPush());
    } catch (RuntimeException e) {
      // Unreadable: acked as ignored, as a push for a service not subscribed is.
      log.warn("Ignoring an unreadable push {} from {}", frame.getPush().getPushId(), address, e);
      send(new Request.PushAck(frame.getPush().getPushId(), false));
      return;
    }
    events.pushed(this, push);
  }

  /** Sends a request nobody waits the answer of (hello, ping, a push's ack). */
  void send(Request request) {
    ClientFrame.Builder frame = ProtoMapper.frame(request);
    if (!(request instanceof Request.PushAck)) {
      frame.setRequestId(requestIds.get());
    }
    if (request instanceof Request.Hello) {
      helloRequestId = frame.getRequestId();
    }
    send(frame.build());
  }

  /**
   * Sends a request and returns its answer; fails as {@link #request(ClientFrame.Builder,
   * Duration)} does.
   */
  CompletableFuture<Answer> request(Request request, Duration timeout) {
    CompletableFuture<Answer> answer = new CompletableFuture<>();
    request(ProtoMapper.frame(request), timeout).whenComplete((r, e) -> {
      if (e != null) {
        answer.completeExceptionally(e);
      } else {
        answer.complete(ProtoMapper.answer(r));
      }
    });
    return answer;
  }

  /** Sends a frame; writes from all threads are serialised. */
  void send(ClientFrame frame) {
    synchronized (this) {
      if (ended.isDone()) {
        return;
      }
      attached().send(frame);
      lastSentNanos = ticker.nanoTime();
    }
  }

  /**
   * Sends a request frame with a fresh request id and returns its result. The future fails
   * with {@link TimeoutException} after {@code timeout}, and with
   * {@link SessionLostException} when the session ends first.
   *
   * <p>Timeouts share one timer per session, armed for the earliest deadline, instead of a
   * timer scheduled and cancelled per request: under load that was a scheduler lock taken twice
   * per request and, as cancelled tasks stay queued until due, hundreds of thousands of them.
   */
  CompletableFuture<Result> request(ClientFrame.Builder frame, Duration timeout) {
    String requestId = requestIds.get();
    CompletableFuture<Result> future = new CompletableFuture<>();
    long deadline = ticker.nanoTime() + timeout.toNanos();
    pending.put(requestId, new Pending(future, deadline, timeout));
    future.whenComplete((r, e) -> pending.remove(requestId));
    if (ended.isDone()) {
      future.completeExceptionally(new SessionLostException("session to " + address + " ended"));
      return future;
    }
    armExpiry(deadline);
    send(frame.setRequestId(requestId).build());
    return future;
  }

  private void armExpiry(long deadline) {
    synchronized (expiryLock) {
      if (expiryTimer != null && expiryAt - deadline <= 0) {
        return;
      }
      if (expiryTimer != null) {
        expiryTimer.cancel(false);
      }
      schedule(deadline, ticker.nanoTime());
    }
  }

  /** Arms the timer for {@code deadline}; under expiryLock. */
  private void schedule(long deadline, long now) {
    expiryAt = deadline;
    try {
      expiryTimer = scheduler.schedule(this::expire, Math.max(0, deadline - now), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      // A user-supplied scheduler that was shut down: waiters still time out on their own clock.
      expiryTimer = null;
    }
  }

  /** Fails the requests whose deadline passed and re-arms the timer for the next one. */
  private void expire() {
    List<Map.Entry<String, Pending>> overdue = new ArrayList<>();
    synchronized (expiryLock) {
      // Under the lock: a request added after this scan arms its own timer once it is free.
      expiryTimer = null;
      long now = ticker.nanoTime();
      boolean more = false;
      long next = 0;
      for (Map.Entry<String, Pending> e : pending.entrySet()) {
        long deadline = e.getValue().deadline;
        if (deadline - now <= 0) {
          overdue.add(e);
        } else if (!more || deadline - next < 0) {
          next = deadline;
          more = true;
        }
      }
      if (more && !ended.isDone()) {
        schedule(next, now);
      }
    }
    // Outside the lock: completing runs the waiters' callbacks, which may take other locks.
    for (Map.Entry<String, Pending> e : overdue) {
      e.getValue().future.completeExceptionally(new TimeoutException(
          "no result for request " + e.getKey() + " within " + e.getValue().timeout.toMillis() + " ms"));
    }
  }

  /** Completes the request a {@code result} answers; unknown ids are ignored. */
  void complete(String requestId, Result result) {
    Pending p = pending.get(requestId);
    if (p != null) {
      p.future.complete(result);
    }
  }

  void halfClose() {
    synchronized (this) {
      if (!ended.isDone()) {
        attached().halfClose();
      }
    }
  }

  void cancel(String reason) {
    synchronized (this) {
      if (!ended.isDone()) {
        attached().cancel(reason);
      }
    }
  }

  /** Marks the stream over and fails every waiting request with {@code cause}. */
  void ended(Throwable cause) {
    synchronized (this) {
      ended.complete(null);
    }
    synchronized (expiryLock) {
      if (expiryTimer != null) {
        expiryTimer.cancel(false);
        expiryTimer = null;
      }
    }
    for (Pending p : pending.values()) {
      p.future.completeExceptionally(cause);
    }
  }

  /** Completes when the stream is over (completed, failed or cancelled). */
  CompletableFuture<Void> endedFuture() {
    return ended;
  }

  @Override
  public String toString() {
    return "session#" + id + "(" + address + ")";
  }

  /** Completes once every request sent so far is answered (or failed, or the session ended). */
  CompletableFuture<Void> allAnswered() {
    return CompletableFuture.allOf(pending.values().stream().map(p -> p.future.handle((r, e) -> null))
        .toArray(CompletableFuture[]::new));
  }

  private record Pending(CompletableFuture<Result> future, long deadline, Duration timeout) {}
}
