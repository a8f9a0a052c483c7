package io.roster.server.testing;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.SessionGrpc;
import io.roster.proto.v1.Subscribe;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A raw Connect stream for tests: send frames, wait for results and pushes. Pushes are acked
 * as they arrive unless {@link #autoAck(boolean)} turns that off. {@link LoopbackServer} opens
 * and closes them; {@code send} may be called from any thread, the waits from one.
 */
public final class TestSession implements AutoCloseable {

  /** How long a wait for a frame or the end of the stream may take, scaled by the test time factor. */
  public static final Duration WAIT = TestTime.seconds(10);

  private final StreamRecorder<ServerFrame> received = new StreamRecorder<>();
  private final BlockingQueue<ServerFrame> frames = received.values();
  private final CompletableFuture<Status> closed = received.end();
  private final ClientCallStreamObserver<ClientFrame> requests;
  private final AtomicInteger ids = new AtomicInteger();
  private volatile boolean autoAck = true;

  /** @param initialRequests how many server frames to accept before reading stops; -1 = all */
  public TestSession(ManagedChannel channel, int initialRequests) {
    CompletableFuture<ClientCallStreamObserver<ClientFrame>> started = new CompletableFuture<>();
    SessionGrpc.newStub(channel).connect(new ClientResponseObserver<ClientFrame, ServerFrame>() {
      @Override
      public void beforeStart(ClientCallStreamObserver<ClientFrame> stream) {
        if (initialRequests >= 0) {
          stream.disableAutoRequestWithInitial(initialRequests);
        }
        started.complete(stream);
      }

      @Override
      public void onNext(ServerFrame f) {
        received.onNext(f);
        if (autoAck && f.hasPush()) {
          send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId(f.getPush().getPushId())).build());
        }
      }

      @Override
      public void onError(Throwable t) {
        received.onError(t);
      }

      @Override
      public void onCompleted() {
        received.onCompleted();
      }
    });
    requests = started.join();
  }

  public TestSession(ManagedChannel channel) {
    this(channel, -1);
  }

  /** Whether pushes are acked as they arrive (the default); off, the test acks them itself. */
  public void autoAck(boolean on) {
    autoAck = on;
  }

  /** Completes with the stream's end: {@code OK} when the server completed it, else its status. */
  public CompletableFuture<Status> closed() {
    return closed;
  }

  /** Lets the server send {@code n} more frames (with {@code initialRequests} set). */
  public void request(int n) {
    requests.request(n);
  }

  public synchronized void send(ClientFrame frame) {
    requests.onNext(frame);
  }

  public String nextId() {
    return "r" + ids.incrementAndGet();
  }

  public TestSession hello(String clientId) {
    helloFrame(Hello.newBuilder().setClientId(clientId));
    return this;
  }

  /** Says hello and returns the welcome frame. */
  public ServerFrame helloFrame(Hello.Builder hello) {
    String id = nextId();
    send(ClientFrame.newBuilder().setRequestId(id).setHello(hello).build());
    ServerFrame f = await(x -> x.getRequestId().equals(id));
    if (!f.hasWelcome()) {
      throw new AssertionError("expected welcome, got " + f);
    }
    return f;
  }

  public Result request(ClientFrame.Builder frame) {
    String id = nextId();
    send(frame.setRequestId(id).build());
    return await(x -> x.getRequestId().equals(id) && x.hasResult()).getResult();
  }

  /** Takes every frame received and not yet consumed. */
  public java.util.List<ServerFrame> drainFrames() {
    java.util.List<ServerFrame> out = new java.util.ArrayList<>();
    frames.drainTo(out);
    return out;
  }

  /** Sends a ping and waits for its pong. */
  public void ping() {
    String id = nextId();
    send(ClientFrame.newBuilder().setRequestId(id).setPing(io.roster.proto.v1.Ping.getDefaultInstance()).build());
    await(x -> x.getRequestId().equals(id) && x.hasPong());
  }

  public Result register(String service, String ip, int port) {
    return request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(key(service)).setInstance(Instance.newBuilder().setIp(ip).setPort(port))));
  }

  public Result subscribe(String service) {
    return request(ClientFrame.newBuilder().setSubscribe(Subscribe.newBuilder().setService(key(service))));
  }

  public static ServiceKey key(String service) {
    return ServiceKey.newBuilder().setName(service).build();
  }

  /** Waits for the next frame matching {@code p}, dropping the ones before it. */
  public ServerFrame await(Predicate<ServerFrame> p) {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      long left = deadline - System.nanoTime();
      ServerFrame f;
      try {
        f = left > 0 ? frames.poll(left, TimeUnit.NANOSECONDS) : null;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
      if (f == null) {
        throw new AssertionError("no matching frame within " + WAIT);
      }
      if (p.test(f)) {
        return f;
      }
    }
  }

  /** Waits for a push of {@code service} whose state matches {@code p}. */
  public ServiceInfo awaitPush(String service, Predicate<ServiceInfo> p) {
    return await(f -> f.hasPush() && f.getPush().getServiceInfo().getService().getName().equals(service)
        && p.test(f.getPush().getServiceInfo())).getPush().getServiceInfo();
  }

  public void halfClose() {
    synchronized (this) {
      requests.onCompleted();
    }
  }

  public void cancel() {
    requests.cancel("test cancels", null);
  }

  public Status awaitClosed() throws Exception {
    return closed.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    if (!closed.isDone()) {
      cancel();
    }
  }
}
