package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.roster.client.TestServers;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.ListServicesResponse;
import io.roster.proto.v1.Push;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.Welcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** A transport that records what the client sends and lets the test play the server. */
final class FakeConnector implements Connector {

  final List<FakeStream> streams = new CopyOnWriteArrayList<>();
  final BlockingQueue<QueryInstancesRequest> queries = new LinkedBlockingQueue<>();
  volatile Function<QueryInstancesRequest, CompletableFuture<QueryInstancesResponse>> queryAnswer =
      r -> CompletableFuture.failedFuture(Status.UNAVAILABLE.asRuntimeException());
  volatile boolean shutdown;
  /**
   * Waits until what the test played as the server has taken effect in the client: the client's
   * serial context adds a transport event without waiting for it when another thread (a caller
   * of the test) runs the queue, so the test's transport thread waits here instead.
   */
  volatile Runnable settle = () -> { };

  /**
   * Settles through the client's connection manager after every event this transport, and every
   * timer {@code clock}, delivers; {@code connection} is asked each time (the test's client may be
   * created later). Returns this.
   */
  FakeConnector settlingOn(FakeClock clock, java.util.function.Supplier<ConnectionManager> connection) {
    settle = () -> connection.get().settle();
    clock.settle = settle;
    return this;
  }

  @Override
  public SessionStream openSession(ServerAddress address, SessionStream.Listener listener) {
    FakeStream s = new FakeStream(address, listener);
    s.settle = () -> settle.run();
    streams.add(s);
    return s;
  }

  @Override
  public CompletableFuture<QueryInstancesResponse> queryInstances(
      ServerAddress address, QueryInstancesRequest request, Duration timeout) {
    queries.add(request);
    return queryAnswer.apply(request);
  }

  @Override
  public CompletableFuture<ListServicesResponse> listServices(
      ServerAddress address, ListServicesRequest request, Duration timeout) {
    return CompletableFuture.failedFuture(Status.UNIMPLEMENTED.asRuntimeException());
  }

  @Override
  public void shutdown(Duration timeout) {
    shutdown = true;
  }

  FakeStream latest() {
    assertThat(streams).as("opened sessions").isNotEmpty();
    return streams.get(streams.size() - 1);
  }

  /** One fake session stream. */
  static final class FakeStream implements SessionStream {
    final ServerAddress address;
    final SessionStream.Listener listener;
    final BlockingQueue<ClientFrame> sent = new LinkedBlockingQueue<>();
    volatile boolean halfClosed;
    volatile String cancelled;
    volatile Runnable settle = () -> { };

    FakeStream(ServerAddress address, SessionStream.Listener listener) {
      this.address = address;
      this.listener = listener;
    }

    @Override
    public void send(ClientFrame frame) {
      sent.add(frame);
    }

    @Override
    public void halfClose() {
      halfClosed = true;
    }

    @Override
    public void cancel(String reason) {
      cancelled = reason;
    }

    /** The next frame the client sent, waiting for it up to the (scaled) real-time patience. */
    ClientFrame next() {
      try {
        ClientFrame f = sent.poll(TestServers.patience().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(f).as("a frame sent on " + address).isNotNull();
        return f;
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }

    /** The next frame, which must be of the given kind. */
    ClientFrame next(ClientFrame.FrameCase kind) {
      ClientFrame f = next();
      assertThat(f.getFrameCase()).as("frame %s", f).isEqualTo(kind);
      return f;
    }

    /** The hello the last {@link #welcome} answered. */
    volatile ClientFrame hello;

    void welcome() {
      welcome(0);
    }

    /** Answers the hello; {@code keepaliveTimeMs} 0 leaves the server's keepalive unsaid. */
    void welcome(long keepaliveTimeMs) {
      welcome(keepaliveTimeMs, List.of());
    }

    /** Answers the hello, listing these optional frames as understood. */
    void welcome(long keepaliveTimeMs, List<String> features) {
      ClientFrame hello = next(ClientFrame.FrameCase.HELLO);
      this.hello = hello;
      deliver(ServerFrame.newBuilder().setRequestId(hello.getRequestId())
          .setWelcome(Welcome.newBuilder().setConnectionId("c-" + address).setNodeId("n1")
              .setKeepaliveTimeMs(keepaliveTimeMs).addAllFeatures(features))
          .build());
    }

    /** Answers the hello as a server that is warming up for {@code warmUpMs} more. */
    void welcomeWarming(long warmUpMs) {
      ClientFrame hello = next(ClientFrame.FrameCase.HELLO);
      deliver(ServerFrame.newBuilder().setRequestId(hello.getRequestId())
          .setWelcome(Welcome.newBuilder().setConnectionId("c-" + address).setNodeId("n1")
              .setWarmUpRemainingMs(warmUpMs))
          .build());
    }

    /** The server's warm-up is over. */
    void warmUpDone() {
      deliver(ServerFrame.newBuilder()
          .setWarmUpDone(io.roster.proto.v1.WarmUpDone.getDefaultInstance()).build());
    }

    void ok(ClientFrame request) {
      result(request, Result.newBuilder().setOk(true).build());
    }

    void error(ClientFrame request, ErrorCode code, String message, String field) {
      result(request, Result.newBuilder().setCode(code).setMessage(message).setField(field)
          .build());
    }

    void result(ClientFrame request, Result result) {
      deliver(ServerFrame.newBuilder().setRequestId(request.getRequestId())
          .setResult(result).build());
    }

    void push(String pushId, ServiceInfo info) {
      deliver(ServerFrame.newBuilder()
          .setPush(Push.newBuilder().setPushId(pushId).setServiceInfo(info)).build());
    }

    void push(String pushId, io.roster.proto.v1.ServiceDelta delta) {
      deliver(ServerFrame.newBuilder()
          .setPush(Push.newBuilder().setPushId(pushId).setDelta(delta)).build());
    }

    void pong() {
      deliver(ServerFrame.newBuilder()
          .setPong(io.roster.proto.v1.Pong.getDefaultInstance()).build());
    }

    void reconnect(String suggested) {
      deliver(ServerFrame.newBuilder().setReconnect(Reconnect.newBuilder()
          .setReason("test").setSuggestedServer(suggested)).build());
    }

    void fail() {
      end(Status.UNAVAILABLE.withDescription("connection refused")
          .asRuntimeException());
    }

    void complete() {
      end(null);
    }

    /** Hands a frame to the client, as its transport thread would, and waits for its effect. */
    private void deliver(ServerFrame frame) {
      listener.onFrame(frame);
      settle.run();
    }

    /** Ends the stream, as its transport thread would, and waits for the effect. */
    private void end(@org.jspecify.annotations.Nullable Throwable error) {
      listener.onClose(error);
      settle.run();
    }
  }
}
