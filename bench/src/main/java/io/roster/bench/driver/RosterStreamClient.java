package io.roster.bench.driver;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.DeregisterInstance;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.Ping;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.SessionGrpc;
import io.roster.proto.v1.Subscribe;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A minimal Roster session for the many-clients workloads: one {@code Session/Connect} stream
 * on its own channel (so its own TCP connection, as with the SDK), on a shared event loop.
 * It says hello, pings at the server's keepalive interval, acks every push and hands pushes to
 * the listener on the event loop thread. No reconnect, no poll fallback, no cache.
 *
 * <p>Thread-safe: writes to the request stream are serialised on this object.
 */
final class RosterStreamClient implements BenchClient, StreamObserver<ServerFrame> {

  private final ManagedChannel channel;
  private final Duration timeout;
  private final Map<String, CompletableFuture<ServerFrame>> pending = new ConcurrentHashMap<>();
  private final Map<String, Consumer<List<Endpoint>>> listeners = new ConcurrentHashMap<>();
  private final AtomicLong requestIds = new AtomicLong();
  private final CompletableFuture<Void> ended = new CompletableFuture<>();
  private StreamObserver<ClientFrame> requests;
  private ScheduledFuture<?> pingTask;
  private boolean closed;

  private RosterStreamClient(ManagedChannel channel, Duration timeout) {
    this.channel = channel;
    this.timeout = timeout;
  }

  static RosterStreamClient connect(String target, io.grpc.ChannelCredentials credentials, String token, String clientId,
      EventLoopGroup eventLoop, ScheduledExecutorService pinger, Duration timeout) {
    io.grpc.Metadata bearer = new io.grpc.Metadata();
    if (!token.isEmpty()) {
      bearer.put(io.grpc.Metadata.Key.of("authorization", io.grpc.Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    }
    ManagedChannel channel = NettyChannelBuilder.forTarget(target, credentials)
        .intercept(io.grpc.stub.MetadataUtils.newAttachHeadersInterceptor(bearer))
        .eventLoopGroup(eventLoop)
        .channelType(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class)
        .directExecutor()
        .build();
    RosterStreamClient c = new RosterStreamClient(channel, timeout);
    synchronized (c) {
      c.requests = SessionGrpc.newStub(channel).connect(c);
    }
    try {
      ServerFrame welcome = c.call(ClientFrame.newBuilder()
          .setHello(Hello.newBuilder().setClientId(clientId).setClientName("roster-bench-raw").setToken(token)));
      if (!welcome.hasWelcome()) {
        throw new IllegalStateException("hello answered with " + welcome);
      }
      long interval = Math.max(1000, welcome.getWelcome().getKeepaliveTimeMs());
      synchronized (c) {
        c.pingTask = pinger.scheduleAtFixedRate(c::ping,
            (long) (Math.random() * interval), interval, TimeUnit.MILLISECONDS);
      }
      return c;
    } catch (RuntimeException e) {
      c.close();
      throw e;
    }
  }

  @Override
  public void register(String service, Endpoint e) {
    expectOk(call(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(key(service)).setInstance(instance(e)))));
  }

  @Override
  public void deregister(String service, Endpoint e) {
    expectOk(call(ClientFrame.newBuilder().setDeregister(DeregisterInstance.newBuilder()
        .setService(key(service)).setInstance(instance(e)))));
  }

  @Override
  public void batchRegister(String service, List<Endpoint> endpoints) {
    BatchRegisterInstances.Builder b = BatchRegisterInstances.newBuilder().setService(key(service));
    endpoints.forEach(e -> b.addInstances(instance(e)));
    expectOk(call(ClientFrame.newBuilder().setBatchRegister(b)));
  }

  @Override
  public List<Endpoint> query(String service) {
    ServiceInfo info = RegistryGrpc.newBlockingStub(channel)
        .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
        .queryInstances(QueryInstancesRequest.newBuilder().setService(key(service)).build())
        .getServiceInfo();
    return endpoints(info);
  }

  @Override
  public void subscribe(String service, Consumer<List<Endpoint>> listener) {
    listeners.put(service, listener);
    expectOk(call(ClientFrame.newBuilder().setSubscribe(Subscribe.newBuilder().setService(key(service)))));
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      if (pingTask != null) {
        pingTask.cancel(false);
      }
      try {
        requests.onCompleted();
      } catch (RuntimeException ignored) {
        // the call is already over
      }
    }
    try {
      ended.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException ignored) {
      // ended with an error, or the server did not answer: cut it
    }
    channel.shutdownNow();
  }

  // ---- server frames, on the event loop ----

  @Override
  public void onNext(ServerFrame frame) {
    if (frame.hasPush()) {
      send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId(frame.getPush().getPushId())).build());
      ServiceInfo info = frame.getPush().getServiceInfo();
      Consumer<List<Endpoint>> l = listeners.get(info.getService().getName());
      if (l != null) {
        l.accept(endpoints(info));
      }
      return;
    }
    CompletableFuture<ServerFrame> f = pending.remove(frame.getRequestId());
    if (f != null) {
      f.complete(frame);
    }
  }

  @Override
  public void onError(Throwable t) {
    failAll(t);
  }

  @Override
  public void onCompleted() {
    failAll(new IllegalStateException("session ended by the server"));
  }

  private void failAll(Throwable t) {
    ended.complete(null);
    pending.values().forEach(f -> f.completeExceptionally(t));
    pending.clear();
  }

  // ---- helpers ----

  private ServerFrame call(ClientFrame.Builder frame) {
    String id = Long.toString(requestIds.incrementAndGet());
    CompletableFuture<ServerFrame> f = new CompletableFuture<>();
    pending.put(id, f);
    if (ended.isDone()) {
      pending.remove(id);
      throw new IllegalStateException("session is over");
    }
    send(frame.setRequestId(id).build());
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("session failed: " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      pending.remove(id);
      throw new IllegalStateException("no answer to request " + id + " within " + timeout);
    }
  }

  private synchronized void send(ClientFrame frame) {
    if (closed && !frame.hasPushAck()) {
      throw new IllegalStateException("client is closed");
    }
    try {
      requests.onNext(frame);
    } catch (RuntimeException ignored) {
      // the call is over; pending requests fail through onError
    }
  }

  private void ping() {
    synchronized (this) {
      if (closed) {
        return;
      }
    }
    String id = "p" + requestIds.incrementAndGet();
    send(ClientFrame.newBuilder().setRequestId(id).setPing(Ping.getDefaultInstance()).build());
  }

  private static void expectOk(ServerFrame f) {
    if (!f.hasResult() || !f.getResult().getOk()) {
      throw new IllegalStateException("refused: " + f.getResult().getCode() + " " + f.getResult().getMessage());
    }
  }

  private static ServiceKey key(String service) {
    return ServiceKey.newBuilder().setName(service).build();
  }

  private static Instance instance(Endpoint e) {
    return Instance.newBuilder().setIp(e.ip()).setPort(e.port()).build();
  }

  private static List<Endpoint> endpoints(ServiceInfo info) {
    List<Endpoint> out = new ArrayList<>(info.getInstancesCount());
    for (Instance i : info.getInstancesList()) {
      out.add(new Endpoint(i.getIp(), i.getPort()));
    }
    return out;
  }
}
