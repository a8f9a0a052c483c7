package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.HealthCheck;
import io.roster.proto.v1.HealthCheckType;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.process.LocalCluster;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * probe: server-side probes of persistent instances on three members (docs/persistence.md).
 * Registers {@code --probe-instances} persistent instances at 127.1.x.y on one port, where one
 * listener in this process accepts and resets every TCP probe (any 127/8 address reaches it), and
 * the JDK's HTTP server on another answers the HTTP probes (the check's port); first with their
 * clusters' check set to none, then TCP, then HTTP. Each phase measures the three
 * members' CPU over {@code --probe-seconds}; the difference from the phase without probes, per
 * instance and second, is what a probe costs. It also counts the connections each phase leaves in
 * TIME_WAIT on the machine, and the probes the listener saw against what the interval asks.
 */
final class Probing {

  private static final Duration INTERVAL = Duration.ofSeconds(3);
  private static final int SERVICES = 100;

  private Probing() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int instances = args.size("probe-instances");
    int seconds = args.size("probe-seconds");
    Result r = new Result("probe", String.format("Server-side probes on 3 members: %,d persistent instances, "
        + "interval %ds, %d s per phase", instances, INTERVAL.toSeconds(), seconds));
    try (Target target = new Target();
        LocalCluster c = LocalCluster.builder(LocalServer.launcher(jar, args.serverJvm, logDir)).size(3)
            .peerTls(args.peerTls).logName("probe").startTimeout(Duration.ofSeconds(90))
            .flags("--max-instances-per-service", "100000", "--probe-interval", INTERVAL.toSeconds() + "s").start()) {
      List<ManagedChannel> channels = new ArrayList<>();
      try {
        for (int m = 0; m < c.size(); m++) {
          channels.add(NettyChannelBuilder.forTarget(c.address(m)).usePlaintext().build());
        }
        RegistryGrpc.RegistryBlockingStub admin = RegistryGrpc.newBlockingStub(channels.get(0));
        check(admin, HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_NONE).build());
        register(channels, instances, target.port());
        double idle = phase(c, target, seconds).cpuMs;
        r.row("3 members' CPU without probes (check: none)", String.format("%.0f ms/s", idle / seconds));

        check(admin, HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_TCP).build());
        report(r, "TCP", phase(c, target, seconds), idle, instances, seconds);
        unhealthy(admin, "TCP");

        check(admin, HealthCheck.newBuilder().setType(HealthCheckType.HEALTH_CHECK_TYPE_HTTP).setPath("/health")
            .setCheckPort(target.httpPort()).build());
        report(r, "HTTP", phase(c, target, seconds), idle, instances, seconds);
        unhealthy(admin, "HTTP");
      } finally {
        for (ManagedChannel ch : channels) {
          ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
      }
      r.note("the targets are in the bench process: TCP probes go to one listener on 127.1.x.y:" + target.port()
          + " that accepts and resets, HTTP probes (check port " + target.httpPort() + ") to the JDK's HTTP server, "
          + "which answers 200; three members on 127.0.0.1-3, peer ports "
          + (args.peerTls ? "with mutual TLS" : "in plaintext"));
    }
    return r;
  }

  private record Phase(double cpuMs, long probes, long timeWait) {}

  /** The members' CPU, the probes the target saw and the TIME_WAIT sockets over one phase (after a settling interval). */
  private static Phase phase(LocalCluster c, Target target, int seconds) throws Exception {
    Thread.sleep(INTERVAL.toMillis() * 2); // the bench's own pacing: a phase starts once the interval has turned over
    long cpu0 = 0;
    for (int m = 0; m < c.size(); m++) {
      cpu0 += c.node(m).cpuMillis();
    }
    long seen0 = target.accepted.get();
    Thread.sleep(seconds * 1000L);
    long cpu = -cpu0;
    for (int m = 0; m < c.size(); m++) {
      cpu += c.node(m).cpuMillis();
    }
    return new Phase(cpu, target.accepted.get() - seen0, timeWait());
  }

  private static void report(Result r, String kind, Phase p, double idleMs, int instances, int seconds) {
    double expected = instances * (double) seconds / INTERVAL.toSeconds();
    r.row(kind + ": probes the targets saw / what the interval asks",
        String.format("%,d / %,.0f (%.0f %%)", p.probes, expected, 100.0 * p.probes / expected));
    r.row(kind + ": 3 members' CPU", String.format("%.0f ms/s", p.cpuMs / seconds));
    r.row(kind + ": CPU per instance per second (above the phase without probes)",
        String.format("%.1f µs", (p.cpuMs - idleMs) * 1000.0 / instances / seconds));
    r.row(kind + ": probers' sockets in TIME_WAIT at the phase's end", String.format("%,d", p.timeWait));
  }

  private static void check(RegistryGrpc.RegistryBlockingStub stub, HealthCheck check) {
    for (int s = 0; s < SERVICES; s++) {
      stub.withDeadlineAfter(10, TimeUnit.SECONDS).updateService(UpdateServiceRequest.newBuilder()
          .setService(service(s)).addHealthChecks(check).build());
    }
  }

  /** Every instance must still be healthy: a probe that failed would have flipped it. */
  private static void unhealthy(RegistryGrpc.RegistryBlockingStub stub, String kind) {
    long down = 0;
    for (int s = 0; s < SERVICES; s++) {
      down += stub.withDeadlineAfter(10, TimeUnit.SECONDS).queryInstances(QueryInstancesRequest.newBuilder()
          .setService(service(s)).build()).getServiceInfo().getInstancesList().stream()
          .filter(i -> !i.getHealthy()).count();
    }
    if (down > 0) {
      throw new IllegalStateException(kind + ": " + down + " instances unhealthy although their target answers");
    }
  }

  private static void register(List<ManagedChannel> channels, int instances, int port) throws Exception {
    List<com.google.common.util.concurrent.ListenableFuture<?>> calls = new ArrayList<>();
    for (int i = 0; i < instances; i++) {
      calls.add(RegistryGrpc.newFutureStub(channels.get(i % channels.size())).withDeadlineAfter(60, TimeUnit.SECONDS)
          .registerInstance(RegisterInstanceRequest.newBuilder().setService(service(i % SERVICES))
              .setInstance(Instance.newBuilder().setIp("127.1." + (i >> 8 & 255) + "." + (i & 255)).setPort(port))
              .build()));
      if (calls.size() == 256) {
        for (var call : calls) {
          call.get();
        }
        calls.clear();
      }
    }
    for (var call : calls) {
      call.get();
    }
  }

  /** Sockets in TIME_WAIT from a member (127.0.0.x) to a target (127.1.x.y): the probers' own. */
  private static long timeWait() throws Exception {
    Process ss = new ProcessBuilder("ss", "-tanH", "state", "time-wait").redirectErrorStream(true).start();
    long lines = new String(ss.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
        .map(l -> l.replace("[::ffff:", "").replace("]", "").trim().split("\\s+"))
        .filter(f -> f.length >= 4 && f[2].startsWith("127.0.0.") && f[3].startsWith("127.1.")).count();
    ss.waitFor(10, TimeUnit.SECONDS);
    return lines;
  }

  private static ServiceKey service(int s) {
    return ServiceKey.newBuilder().setName(String.format("probed-%03d", s)).build();
  }

  /**
   * The targets of every instance: a TCP listener that accepts and resets (the instances' port),
   * and the JDK's HTTP server on another port (the HTTP check's port) that answers 200.
   */
  private static final class Target implements AutoCloseable {
    final ServerSocketChannel server;
    final com.sun.net.httpserver.HttpServer web;
    final AtomicLong accepted = new AtomicLong();
    private final Thread thread;
    private final java.util.concurrent.ExecutorService answers = java.util.concurrent.Executors.newFixedThreadPool(4);

    Target() throws IOException {
      server = ServerSocketChannel.open();
      server.bind(new InetSocketAddress("0.0.0.0", 0), 4096);
      thread = new Thread(this::serve, "probe-target");
      thread.setDaemon(true);
      thread.start();
      web = com.sun.net.httpserver.HttpServer.create(new InetSocketAddress("0.0.0.0", 0), 4096);
      web.createContext("/health", x -> {
        accepted.incrementAndGet();
        x.sendResponseHeaders(200, -1);
        x.close();
      });
      web.setExecutor(answers);
      web.start();
    }

    int port() {
      return ((InetSocketAddress) server.socket().getLocalSocketAddress()).getPort();
    }

    int httpPort() {
      return web.getAddress().getPort();
    }

    private void serve() {
      while (server.isOpen()) {
        try (SocketChannel s = server.accept()) {
          accepted.incrementAndGet();
          s.setOption(StandardSocketOptions.SO_LINGER, 0); // a reset: no TIME_WAIT on this side either
        } catch (IOException e) {
          // a probe that gave up, or the listener closed
        }
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
      web.stop(0);
      answers.shutdownNow();
    }
  }
}
