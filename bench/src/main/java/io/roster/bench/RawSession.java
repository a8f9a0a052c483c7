package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Ping;
import io.roster.proto.v1.Push;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * A raw {@code Session/Connect} stream for W9: says hello (announcing delta pushes or not),
 * sends requests and waits for their results, acks every push as it arrives and hands it, with
 * its arrival time and its size on the wire, to a listener on the transport thread. No cache:
 * W9 measures what the server sends and when, not what a client does with it.
 *
 * <p>Thread-safe: writes are serialised on this object.
 */
final class RawSession implements ClientResponseObserver<ClientFrame, ServerFrame>, AutoCloseable {

  /** A push as it arrived: when ({@link System#nanoTime}) and its serialised size in bytes. */
  interface PushListener extends BiConsumer<Push, long[]> {}

  private final ManagedChannel channel;
  private final Map<String, CompletableFuture<ServerFrame>> pending = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private final PushListener listener;
  private ClientCallStreamObserver<ClientFrame> requests;

  private RawSession(ManagedChannel channel, PushListener listener) {
    this.channel = channel;
    this.listener = listener;
  }

  /** Connects and says hello; {@code deltas}: list the "delta" feature. */
  static RawSession open(String target, String clientId, boolean deltas, PushListener listener) {
    ManagedChannel channel = NettyChannelBuilder.forTarget(target).usePlaintext()
        .maxInboundMessageSize(16 * 1024 * 1024).directExecutor().build();
    RawSession s = new RawSession(channel, listener);
    io.roster.proto.v1.SessionGrpc.newStub(channel).connect(s);
    Hello.Builder hello = Hello.newBuilder().setClientId(clientId).setClientName("roster-bench-w9");
    if (deltas) {
      hello.addFeatures("delta");
    }
    ServerFrame welcome = s.call(ClientFrame.newBuilder().setHello(hello));
    if (!welcome.hasWelcome()) {
      throw new IllegalStateException("hello answered with " + welcome);
    }
    return s;
  }

  @Override
  public void beforeStart(ClientCallStreamObserver<ClientFrame> stream) {
    this.requests = stream;
  }

  /** Sends a request frame and returns its result; fails when it is not ok. */
  Result request(ClientFrame.Builder frame) {
    ServerFrame f = call(frame);
    if (!f.hasResult() || !f.getResult().getOk()) {
      throw new IllegalStateException("refused: " + f);
    }
    return f.getResult();
  }

  void ping() {
    send(ClientFrame.newBuilder().setRequestId("p" + ids.incrementAndGet()).setPing(Ping.getDefaultInstance()).build());
  }

  private ServerFrame call(ClientFrame.Builder frame) {
    String id = Long.toString(ids.incrementAndGet());
    CompletableFuture<ServerFrame> f = new CompletableFuture<>();
    pending.put(id, f);
    send(frame.setRequestId(id).build());
    try {
      return f.get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("no answer to " + frame.getFrameCase() + ": " + e, e);
    } finally {
      pending.remove(id);
    }
  }

  private synchronized void send(ClientFrame frame) {
    requests.onNext(frame);
  }

  @Override
  public void onNext(ServerFrame frame) {
    if (frame.hasPush()) {
      long at = System.nanoTime();
      send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId(frame.getPush().getPushId())).build());
      listener.accept(frame.getPush(), new long[] {at, frame.getSerializedSize()});
      return;
    }
    CompletableFuture<ServerFrame> f = pending.get(frame.getRequestId());
    if (f != null) {
      f.complete(frame);
    }
  }

  @Override
  public void onError(Throwable t) {
    pending.values().forEach(f -> f.completeExceptionally(t));
  }

  @Override
  public void onCompleted() {
    pending.values().forEach(f -> f.completeExceptionally(new IllegalStateException("session ended")));
  }

  @Override
  public void close() {
    try {
      synchronized (this) {
        requests.onCompleted();
      }
    } catch (RuntimeException ignored) {
      // already over
    }
    channel.shutdown();
    try {
      channel.awaitTermination(Duration.ofSeconds(5).toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    channel.shutdownNow();
  }
}
