package io.roster.server.testing;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Records what a server-streaming call (a Watch) or a unary call answers: every message in a
 * queue, and the end as a {@link Status} ({@code OK} when completed). Callbacks may run on
 * any gRPC thread; the test reads from its own.
 */
public final class StreamRecorder<T> implements StreamObserver<T> {

  /** How long {@link #next()} and {@link #awaitEnd()} wait, scaled by the test time factor. */
  public static final Duration WAIT = TestTime.seconds(10);

  private final BlockingQueue<T> values = new LinkedBlockingQueue<>();
  private final CompletableFuture<Status> end = new CompletableFuture<>();

  @Override
  public void onNext(T value) {
    values.add(value);
  }

  @Override
  public void onError(Throwable t) {
    end.complete(Status.fromThrowable(t));
  }

  @Override
  public void onCompleted() {
    end.complete(Status.OK);
  }

  /** Takes the next message, waiting up to {@link #WAIT}; {@code null} if none came. */
  public T next() throws InterruptedException {
    return values.poll(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The messages received and not yet taken by {@link #next()}. */
  public BlockingQueue<T> values() {
    return values;
  }

  /** Completes when the call ends. */
  public CompletableFuture<Status> end() {
    return end;
  }

  /** Waits up to {@link #WAIT} for the end of the call. */
  public Status awaitEnd() throws Exception {
    return end.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
