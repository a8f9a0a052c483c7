package io.roster.server.testing;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The server's side of a gRPC stream without a transport, for unit tests of what writes to one:
 * records each message with the name of the thread that wrote it, the close ({@link Status#OK}
 * when completed), how many messages the server asked for, and whether two writes ever
 * overlapped (gRPC's observer is not thread-safe). Readiness and cancellation are set by the
 * test; a cancelled stream refuses writes as gRPC's does. Thread-safe.
 */
public final class FakeServerStream<T> extends ServerCallStreamObserver<T> {

  /** One message and the thread that wrote it. */
  public record Written<T>(T message, String thread) {}

  private final List<Written<T>> written = new ArrayList<>();
  private final List<Status> closes = new ArrayList<>();
  private final AtomicInteger inOnNext = new AtomicInteger();
  private final AtomicInteger requested = new AtomicInteger();
  private volatile boolean ready = true;
  private volatile boolean cancelled;
  private volatile boolean overlapped;
  private volatile @Nullable Runnable onReady;
  private volatile @Nullable Runnable onCancel;

  @Override
  @SuppressWarnings("ThreadPriorityCheck") // the yield only widens the window an unguarded second writer would hit
  public void onNext(T value) {
    if (cancelled) {
      throw Status.CANCELLED.withDescription("call already cancelled").asRuntimeException();
    }
    if (inOnNext.incrementAndGet() != 1) {
      overlapped = true;
    }
    try {
      Thread.yield();
      synchronized (this) {
        written.add(new Written<>(value, Thread.currentThread().getName()));
      }
    } finally {
      inOnNext.decrementAndGet();
    }
  }

  @Override
  public synchronized void onError(Throwable t) {
    closes.add(Status.fromThrowable(t));
  }

  @Override
  public synchronized void onCompleted() {
    closes.add(Status.OK);
  }

  /** The messages written so far, in order. */
  public synchronized List<T> messages() {
    return written.stream().map(Written::message).toList();
  }

  /** The messages written so far with their threads, in order. */
  public synchronized List<Written<T>> written() {
    return List.copyOf(written);
  }

  /** Every close the server made (onError's status, or OK), in order. */
  public synchronized List<Status> closes() {
    return List.copyOf(closes);
  }

  /** Whether two writes were ever inside {@code onNext} at once. */
  public boolean overlapped() {
    return overlapped;
  }

  /** How many messages the server has asked for. */
  public int requested() {
    return requested.get();
  }

  /** Sets readiness; becoming ready runs the server's on-ready handler, as the transport would. */
  public void ready(boolean ready) {
    this.ready = ready;
    Runnable r = onReady;
    if (ready && r != null) {
      r.run();
    }
  }

  /** The client cancels: writes fail from now on, and the server's cancel handler runs. */
  public void cancel() {
    cancelled = true;
    Runnable r = onCancel;
    if (r != null) {
      r.run();
    }
  }

  @Override
  public boolean isCancelled() {
    return cancelled;
  }

  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
    this.onCancel = onCancelHandler;
  }

  @Override
  public void setCompression(String compression) {}

  @Override
  public boolean isReady() {
    return ready && !cancelled;
  }

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {
    this.onReady = onReadyHandler;
  }

  @Override
  public void disableAutoInboundFlowControl() {}

  @Override
  public void disableAutoRequest() {}

  @Override
  public void request(int count) {
    requested.addAndGet(count);
  }

  @Override
  public void setMessageCompression(boolean enable) {}
}
