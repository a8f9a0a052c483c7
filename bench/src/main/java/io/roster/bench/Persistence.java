package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import io.roster.server.testing.process.ServerLauncher;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * persist: a standalone server's durable state (docs/persistence.md). Registers {@code
 * --persist-instances} persistent instances over {@code --persist-services} services with
 * Registry/RegisterInstance, {@value #IN_FLIGHT} calls in flight, each forced to disk before it is
 * answered; then restarts the server on its data directory, after SIGTERM and after kill -9, and
 * times start → SERVING with every instance read back. Then the same on three members: the
 * registrations spread over them, and every member killed with -9 at once and started again.
 */
final class Persistence {

  static final int IN_FLIGHT = 256;

  private Persistence() {}

  static Result run(Args args, Path jar, Path logDir) throws Exception {
    int instances = args.size("persist-instances");
    int services = args.size("persist-services");
    Result r = new Result("persist", String.format("Persistent instances on a standalone server: %,d over %,d "
        + "services, then restarts on the data directory", instances, services));
    Path data = Files.createTempDirectory(logDir, "persist-data");
    ServerLauncher launcher = LocalServer.launcher(jar, args.serverJvm, logDir);
    int port = Ports.free();
    List<String> flags = List.of("--data-dir", data.toString(), "--max-instances-per-service", "100000");
    ServerProcess server = launcher.launch("persist-server", "127.0.0.1", port, List.of(), flags).serving();
    try {
      noProbes(List.of("127.0.0.1:" + port), services);
      long cpu0 = server.cpuMillis();
      long t0 = System.nanoTime();
      register(port, instances, services);
      long nanos = System.nanoTime() - t0;
      long cpu = server.cpuMillis() - cpu0;
      r.row("registrations/s (each forced to disk before its answer)",
          String.format("%,.0f (%,d in %d ms)", instances * 1e9 / nanos, instances, nanos / 1_000_000));
      r.row("server CPU per registration", String.format("%.0f µs", cpu * 1000.0 / instances));
      r.row("data directory after the load", String.format("%,d KiB", size(data) / 1024));

      server.stop();
      server = launcher.launch("persist-server-sigterm", "127.0.0.1", port, List.of(), flags);
      Duration sigterm = server.awaitServing(Duration.ofMinutes(5));
      check("127.0.0.1:" + port, instances, services);
      r.row("SIGTERM, start again → SERVING with every instance", sigterm.toMillis() + " ms");
      r.row("RSS after that start", server.rssKib() / 1024 + " MiB");

      server.kill9();
      server = launcher.launch("persist-server-kill9", "127.0.0.1", port, List.of(), flags);
      Duration killed = server.awaitServing(Duration.ofMinutes(5));
      check("127.0.0.1:" + port, instances, services);
      r.row("kill -9, start again → SERVING with every instance", killed.toMillis() + " ms");
    } finally {
      server.close();
    }
    cluster(args, jar, logDir, r, instances, services);
    return r;
  }

  /**
   * The same on three members: registrations spread over them (each member's sessions' changes
   * gathered into its log entries), then every member killed with -9 at once and started again.
   */
  private static void cluster(Args args, Path jar, Path logDir, Result r, int instances, int services)
      throws Exception {
    try (LocalCluster c = LocalCluster.builder(LocalServer.launcher(jar, args.serverJvm, logDir)).size(3)
        .peerTls(args.peerTls).logName("persist").startTimeout(Duration.ofSeconds(90))
        .flags("--max-instances-per-service", "100000").start()) {
      noProbes(List.of(c.address(0)), services);
      long cpu0 = 0;
      for (int m = 0; m < c.size(); m++) {
        cpu0 += c.node(m).cpuMillis();
      }
      long t0 = System.nanoTime();
      register(List.of(c.address(0), c.address(1), c.address(2)), instances, services);
      long nanos = System.nanoTime() - t0;
      long cpu = -cpu0;
      for (int m = 0; m < c.size(); m++) {
        cpu += c.node(m).cpuMillis();
      }
      r.row("3 members: registrations/s, spread over the members (each committed and forced before its answer)",
          String.format("%,.0f (%,d in %d ms)", instances * 1e9 / nanos, instances, nanos / 1_000_000));
      r.row("3 members: server CPU per registration (sum of the three)", String.format("%.0f µs", cpu * 1000.0
          / instances));
      for (int m = 0; m < c.size(); m++) {
        c.node(m).kill9();
      }
      long t1 = System.nanoTime();
      for (int m = 0; m < c.size(); m++) {
        c.relaunch(m);
      }
      for (int m = 0; m < c.size(); m++) {
        c.node(m).awaitServing(Duration.ofMinutes(5));
      }
      long serving = System.nanoTime() - t1;
      for (int m = 0; m < c.size(); m++) {
        check(c.address(m), instances, services);
      }
      r.row("3 members: every member killed with -9, all started again → all SERVING with every instance",
          serving / 1_000_000 + " ms");
      r.note("the cluster part: three members on 127.0.0.1-3, peer ports " + (args.peerTls ? "with mutual TLS"
          : "in plaintext") + ", default cluster flags");
    }
  }

  /**
   * Nothing listens at the instances' addresses: their services' clusters get no probe (check:
   * none), so that this workload measures the durable writes alone; the probe workload measures probes.
   */
  private static void noProbes(List<String> targets, int services) throws Exception {
    ManagedChannel ch = NettyChannelBuilder.forTarget(targets.get(0)).usePlaintext().build();
    try {
      RegistryGrpc.RegistryBlockingStub stub = RegistryGrpc.newBlockingStub(ch);
      for (int s = 0; s < services; s++) {
        stub.withDeadlineAfter(10, TimeUnit.SECONDS).updateService(io.roster.proto.v1.UpdateServiceRequest.newBuilder()
            .setService(service(s)).addHealthChecks(io.roster.proto.v1.HealthCheck.newBuilder()
                .setType(io.roster.proto.v1.HealthCheckType.HEALTH_CHECK_TYPE_NONE)).build());
      }
    } finally {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static void register(int port, int instances, int services) throws Exception {
    register(List.of("127.0.0.1:" + port), instances, services);
  }

  /** Registers instance i through {@code targets[i % targets]}, {@value #IN_FLIGHT} calls in flight in all. */
  private static void register(List<String> targets, int instances, int services) throws Exception {
    List<ManagedChannel> channels = targets.stream()
        .map(t -> NettyChannelBuilder.forTarget(t).usePlaintext().build()).toList();
    try {
      List<RegistryGrpc.RegistryFutureStub> stubs = channels.stream().map(RegistryGrpc::newFutureStub).toList();
      Semaphore window = new Semaphore(IN_FLIGHT);
      AtomicReference<Throwable> failed = new AtomicReference<>();
      for (int i = 0; i < instances && failed.get() == null; i++) {
        window.acquire();
        var call = stubs.get(i % stubs.size()).withDeadlineAfter(60, TimeUnit.SECONDS).registerInstance(
            RegisterInstanceRequest.newBuilder()
            .setService(service(i % services)).setInstance(Instance.newBuilder()
                .setIp("10." + (i >> 16 & 255) + "." + (i >> 8 & 255) + "." + (i & 255)).setPort(5432)).build());
        call.addListener(() -> {
          try {
            call.get();
          } catch (Exception e) {
            failed.compareAndSet(null, e);
          }
          window.release();
        }, Runnable::run);
      }
      window.acquire(IN_FLIGHT);
      if (failed.get() != null) {
        throw new IllegalStateException("a registration failed", failed.get());
      }
    } finally {
      for (ManagedChannel ch : channels) {
        ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }

  /** Every service holds what was registered in it, as {@code target} answers. */
  private static void check(String target, int instances, int services) throws Exception {
    ManagedChannel ch = NettyChannelBuilder.forTarget(target).usePlaintext().build();
    try {
      RegistryGrpc.RegistryBlockingStub stub = RegistryGrpc.newBlockingStub(ch);
      long total = 0;
      for (int s = 0; s < services; s++) {
        total += stub.withDeadlineAfter(10, TimeUnit.SECONDS).getService(GetServiceRequest.newBuilder()
            .setService(service(s)).build()).getInstanceCount();
      }
      if (total != instances) {
        throw new IllegalStateException("read back " + total + " of " + instances + " persistent instances");
      }
    } finally {
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static ServiceKey service(int s) {
    return ServiceKey.newBuilder().setName(String.format("db-%05d", s)).build();
  }

  private static long size(Path dir) throws Exception {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }
}
