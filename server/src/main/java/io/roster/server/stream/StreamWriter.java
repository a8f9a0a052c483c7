package io.roster.server.stream;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;

/**
 * The one way the server writes to a stream it holds open: owns the stream's write lock and
 * whether the stream has ended. Every message, and the stream's one close ({@link #complete} or
 * {@link #fail}), goes through it, so that gRPC's observer (which is not thread-safe) is called
 * by one thread at a time, and never after the stream ended.
 *
 * <p>The contract:
 * <ul>
 *   <li>Messages go out in the order their writers take the lock; a writer's own messages in the
 *       order it wrote them.
 *   <li>Once ended ({@link #end}, a close, or a write the transport refused because the call was
 *       cancelled under it), nothing more is written; a write is then a no-op.
 *   <li>{@link #isReady} is the flow control: false once ended or cancelled, else whether the
 *       transport takes a message now without buffering. Writing while not ready is allowed
 *       (gRPC buffers it); callers that push without bound ask first.
 *   <li>The stream is closed at most once, by the first {@link #complete} or {@link #fail}; a
 *       close after {@link #end} still goes out (the stream ends its writes first, then tells the
 *       client why).
 * </ul>
 *
 * <p>Thread-safe; never blocks beyond the lock, which is held only across one call into gRPC.
 *
 * @param <T> the stream's message type
 */
public final class StreamWriter<T> {

  private final ServerCallStreamObserver<T> out;
  private final Object lock = new Object();
  private boolean ended;  // guarded by lock
  private boolean closed; // guarded by lock

  public StreamWriter(ServerCallStreamObserver<T> out) {
    this.out = out;
  }

  /**
   * Writes {@code message} unless the stream has ended. A write the transport refuses (the call
   * was cancelled under us; its cancel handler cleans up) ends the stream.
   *
   * @return whether the message was handed to the transport
   */
  public boolean write(T message) {
    synchronized (lock) {
      if (ended) {
        return false;
      }
      try {
        out.onNext(message);
        return true;
      } catch (RuntimeException e) {
        ended = true;
        return false;
      }
    }
  }

  /** Whether a message written now goes out without buffering: not ended, not cancelled, and the transport ready. */
  public boolean isReady() {
    synchronized (lock) {
      return !ended && !out.isCancelled() && out.isReady();
    }
  }

  /** Whether the stream has ended: nothing more is written to it. */
  public boolean ended() {
    synchronized (lock) {
      return ended;
    }
  }

  /**
   * Ends the stream's writes without closing it (the peer went, or a close follows).
   *
   * @return whether this call ended it (false when it had ended already)
   */
  public boolean end() {
    synchronized (lock) {
      boolean was = ended;
      ended = true;
      return !was;
    }
  }

  /**
   * Ends the stream and completes it (OK), unless it was closed already.
   *
   * @return whether this call closed it
   */
  public boolean complete() {
    synchronized (lock) {
      if (!markClosed()) {
        return false;
      }
      try {
        out.onCompleted();
      } catch (RuntimeException ignored) {
        // Already cancelled: nothing to complete.
      }
      return true;
    }
  }

  /**
   * Ends the stream and closes it with {@code status}, unless it was closed already.
   *
   * @return whether this call closed it
   */
  public boolean fail(Status status) {
    synchronized (lock) {
      if (!markClosed()) {
        return false;
      }
      try {
        out.onError(status.asRuntimeException());
      } catch (RuntimeException ignored) {
        // Already cancelled.
      }
      return true;
    }
  }

  /** Marks the stream ended and closed; false when it was closed already. Holds the lock. */
  private boolean markClosed() {
    if (closed) {
      return false;
    }
    closed = true;
    ended = true;
    return true;
  }
}
