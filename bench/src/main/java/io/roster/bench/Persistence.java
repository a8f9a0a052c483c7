package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
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
 * times start → SERVING with every instance read back.
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
      check(port, instances, services);
      r.row("SIGTERM, start again → SERVING with every instance", sigterm.toMillis() + " ms");
      r.row("RSS after that start", server.rssKib() / 1024 + " MiB");

      server.kill9();
      server = launcher.launch("persist-server-kill9", "127.0.0.1", port, List.of(), flags);
      Duration killed = server.awaitServing(Duration.ofMinutes(5));
      check(port, instances, services);
      r.row("kill -9, start again → SERVING with every instance", killed.toMillis() + " ms");
    } finally {
      server.close();
    }
    return r;
  }

  private static void register(int port, int instances, int services) throws Exception {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    try {
      RegistryGrpc.RegistryFutureStub stub = RegistryGrpc.newFutureStub(ch);
      Semaphore window = new Semaphore(IN_FLIGHT);
      AtomicReference<Throwable> failed = new AtomicReference<>();
      for (int i = 0; i < instances && failed.get() == null; i++) {
        window.acquire();
        var call = stub.withDeadlineAfter(60, TimeUnit.SECONDS).registerInstance(RegisterInstanceRequest.newBuilder()
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
      ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Every service holds what was registered in it. */
  private static void check(int port, int instances, int services) throws Exception {
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
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
