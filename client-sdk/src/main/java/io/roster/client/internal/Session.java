package io.roster.client.internal;

import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Result;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One attempt at a session: a stream to one server, its state, and the requests waiting for
 * their {@code result}. Writes are serialised here. The connection manager owns the state
 * fields under its lock; {@link #request} and {@link #send} may be called from any thread.
 */
final class Session {

  /** Lifecycle of a session. */
  enum State {
    /** Hello sent, no welcome yet. */
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

  final long id;
  final ServerAddress address;
  private final ScheduledExecutorService scheduler;
  private final Supplier<String> requestIds;
  private final Ticker ticker;
  private final Map<String, CompletableFuture<Result>> pending = new ConcurrentHashMap<>();
  private final CompletableFuture<Void> ended = new CompletableFuture<>();
  private SessionStream stream;

  // Guarded by the connection manager's lock.
  State state = State.CONNECTING;
  String connectionId = "";
  ScheduledFuture<?> connectTimer;
  ScheduledFuture<?> keepAliveTimer;
  long pingSentAtNanos;
  boolean pingOutstanding;

  long framesAtPing;
  /** Ping when nothing was sent or received for this long: the lesser of ours and the server's. */
  long pingIntervalNanos;

  /** Frames received so far; counted by the inbound thread. */
  final AtomicLong framesReceived = new AtomicLong();

  /** Ticker reading of the last frame received; written by the inbound thread. */
  volatile long lastReceivedNanos;

  /** Ticker reading of the last frame sent; the server ends sessions that stay silent. */
  volatile long lastSentNanos;

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

  void attach(SessionStream s) {
    this.stream = s;
  }

  /** Sends a frame; writes from all threads are serialised. */
  void send(ClientFrame frame) {
    synchronized (this) {
      if (ended.isDone()) {
        return;
      }
      stream.send(frame);
      lastSentNanos = ticker.nanoTime();
    }
  }

  /**
   * Sends a request frame with a fresh request id and returns its result. The future fails
   * with {@link TimeoutException} after {@code timeout}, and with
   * {@link SessionLostException} when the session ends first.
   */
  CompletableFuture<Result> request(ClientFrame.Builder frame, Duration timeout) {
    String requestId = requestIds.get();
    CompletableFuture<Result> future = new CompletableFuture<>();
    pending.put(requestId, future);
    Runnable expire = () -> future.completeExceptionally(new TimeoutException(
        "no result for request " + requestId + " within " + timeout.toMillis() + " ms"));
    ScheduledFuture<?> timer = scheduler.schedule(expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
    future.whenComplete((r, e) -> {
      pending.remove(requestId);
      timer.cancel(false);
    });
    if (ended.isDone()) {
      future.completeExceptionally(new SessionLostException("session to " + address + " ended"));
      return future;
    }
    send(frame.setRequestId(requestId).build());
    return future;
  }

  /** Completes the request a {@code result} answers; unknown ids are ignored. */
  void complete(String requestId, Result result) {
    CompletableFuture<Result> future = pending.get(requestId);
    if (future != null) {
      future.complete(result);
    }
  }

  void halfClose() {
    synchronized (this) {
      if (!ended.isDone()) {
        stream.halfClose();
      }
    }
  }

  void cancel(String reason) {
    synchronized (this) {
      if (!ended.isDone()) {
        stream.cancel(reason);
      }
    }
  }

  /** Marks the stream over and fails every waiting request with {@code cause}. */
  void ended(Throwable cause) {
    synchronized (this) {
      ended.complete(null);
    }
    for (CompletableFuture<Result> f : pending.values()) {
      f.completeExceptionally(cause);
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
}
