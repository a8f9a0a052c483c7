package io.roster.bench.driver;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollIoHandler;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The {@code roster} driver. {@link #client} is a real {@link RosterClient} (the SDK, default
 * settings except a 10 s request timeout and one listener executor shared by all clients).
 *
 * <p>The SDK gives every client its own channel and its own scheduler thread and has no way to
 * share them, so {@link #massClient} is, by default ({@code --roster-mass raw}), a
 * {@link RosterStreamClient}: a raw {@code roster.v1.Session/Connect} stream on its own
 * {@code ManagedChannel}, all channels on one shared Netty event loop group, pinging and
 * acking like the SDK does. {@code --roster-mass sdk} uses the SDK for those too.
 */
public final class RosterDriver implements Driver {

  /** How {@link #massClient} makes clients. */
  public enum MassMode { RAW, SDK }

  private final String target;
  private final MassMode massMode;
  /** The CA certificate the clients trust (the server is on TLS), or null for plaintext. */
  private final java.nio.file.@org.jspecify.annotations.Nullable Path tlsTrust;
  /** The token every client presents; empty for none. */
  private final String token;
  private final ExecutorService listenerExecutor =
      Executors.newCachedThreadPool(daemon("bench-roster-listener"));
  private final ScheduledExecutorService sdkScheduler = sharedScheduler();
  private final Object sharedLock = new Object();
  private EventLoopGroup eventLoop;
  private ScheduledExecutorService pinger;

  public RosterDriver(String target, MassMode massMode) {
    this(target, massMode, null);
  }

  /** With {@code tlsTrust} (a CA certificate, PEM), every client connects over TLS trusting it. */
  public RosterDriver(String target, MassMode massMode, java.nio.file.@org.jspecify.annotations.Nullable Path tlsTrust) {
    this(target, massMode, tlsTrust, "");
  }

  /** The same; with a non-empty {@code token}, every client presents it (a server with auth on). */
  public RosterDriver(String target, MassMode massMode, java.nio.file.@org.jspecify.annotations.Nullable Path tlsTrust,
      String token) {
    this.target = target;
    this.massMode = massMode;
    this.tlsTrust = tlsTrust;
    this.token = token;
  }

  @Override
  public String name() {
    return "roster";
  }

  @Override
  public BenchClient client(String clientId) {
    RosterClient.Builder b = RosterClient.builder();
    if (tlsTrust != null) {
      b.tlsTrust(tlsTrust);
    }
    if (!token.isEmpty()) {
      b.token(token);
    }
    RosterClient c = b
        .serverAddresses(target)
        .randomStart(false) // the cluster workloads name each client's own member first
        .clientId(clientId)
        .clientName("roster-bench")
        .requestTimeout(Duration.ofSeconds(10))
        .listenerExecutor(listenerExecutor)
        .scheduler(sdkScheduler)
        .build();
    return new SdkClient(c);
  }

  /** One scheduler thread for every SDK client of a run (RosterClient.Builder#scheduler). */
  private static ScheduledExecutorService sharedScheduler() {
    java.util.concurrent.ScheduledThreadPoolExecutor s =
        new java.util.concurrent.ScheduledThreadPoolExecutor(1, daemon("bench-roster-scheduler"));
    s.setRemoveOnCancelPolicy(true);
    return s;
  }

  @Override
  public BenchClient massClient(String clientId) {
    if (massMode == MassMode.SDK) {
      return client(clientId);
    }
    synchronized (sharedLock) {
      if (eventLoop == null) {
        // Epoll where the SDK's default transport would use it, so raw streams cost what SDK
        // channels cost.
        eventLoop = new MultiThreadIoEventLoopGroup(2, daemon("bench-roster-eventloop"),
            Epoll.isAvailable() ? EpollIoHandler.newFactory() : NioIoHandler.newFactory());
        pinger = Executors.newSingleThreadScheduledExecutor(daemon("bench-roster-pinger"));
      }
    }
    io.grpc.ChannelCredentials credentials;
    try {
      credentials = tlsTrust == null ? io.grpc.InsecureChannelCredentials.create()
          : io.grpc.TlsChannelCredentials.newBuilder().trustManager(tlsTrust.toFile()).build();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return RosterStreamClient.connect(target, credentials, token, clientId, eventLoop, pinger, Duration.ofSeconds(10));
  }

  @Override
  public String describeMassClients() {
    return massMode == MassMode.SDK
        ? "Roster SDK clients (one channel each, one shared scheduler thread)"
        : "raw roster.v1.Session/Connect streams, one ManagedChannel each, on one shared "
            + "2-thread Netty event loop group (hello, ping every keepaliveTimeMs, push acks)";
  }

  @Override
  public void close() {
    listenerExecutor.shutdownNow();
    synchronized (sharedLock) {
      if (eventLoop != null) {
        pinger.shutdownNow();
        eventLoop.shutdownGracefully(0, 1, java.util.concurrent.TimeUnit.SECONDS);
      }
    }
  }

  static ThreadFactory daemon(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  static List<Endpoint> endpoints(List<Instance> instances) {
    List<Endpoint> out = new ArrayList<>(instances.size());
    for (Instance i : instances) {
      out.add(new Endpoint(i.ip(), i.port()));
    }
    return out;
  }

  /** A {@link BenchClient} over the SDK. */
  private static final class SdkClient implements BenchClient {
    private final RosterClient client;

    SdkClient(RosterClient client) {
      this.client = client;
    }

    @Override
    public void register(String service, Endpoint e) {
      client.registerInstance(service, e.ip(), e.port());
    }

    @Override
    public void deregister(String service, Endpoint e) {
      client.deregisterInstance(service, e.ip(), e.port());
    }

    @Override
    public void batchRegister(String service, List<Endpoint> endpoints) {
      List<Instance> list = new ArrayList<>(endpoints.size());
      for (Endpoint e : endpoints) {
        list.add(Instance.of(e.ip(), e.port()));
      }
      client.batchRegisterInstance(service, list);
    }

    @Override
    public List<Endpoint> query(String service) {
      return endpoints(client.getAllInstances(service));
    }

    @Override
    public void subscribe(String service, Consumer<List<Endpoint>> listener) {
      client.subscribe(service, event -> listener.accept(endpoints(event.instances())));
    }

    @Override
    public void close() {
      client.close();
    }
  }
}
