package io.roster.it;

import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The built server jar as a real process on a loopback address. */
final class ServerProcess extends JavaProcess {

  static final Path JAR = Path.of(System.getProperty("roster.server.jar", "../server/target/roster-server.jar"));

  final String host;
  final int port;
  final long startedNanos;

  private ServerProcess(String host, int port, List<String> args, long startedNanos) {
    super("server-" + port, args);
    this.host = host;
    this.port = port;
    this.startedNanos = startedNanos;
  }

  /** Starts a server and waits until health says SERVING. */
  static ServerProcess start(String host, int port, String... flags) {
    ServerProcess p = launch(host, port, flags);
    p.awaitServing(Timing.seconds(30));
    return p;
  }

  /** Starts a server without waiting. */
  static ServerProcess launch(String host, int port, String... flags) {
    return launch(List.of(), host, port, flags);
  }

  /** Starts a server without waiting, with JVM flags after the shipped ones. */
  static ServerProcess launch(List<String> jvmFlags, String host, int port, String... flags) {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR.toAbsolutePath() + " is missing: build the server first (make build)");
    }
    List<String> args = new ArrayList<>(shippedJvmOptions()); // as make run
    args.addAll(jvmFlags);
    Path archive = JAR.resolveSibling("roster-server.jsa");
    if (Files.isRegularFile(archive)) {
      args.add("-XX:SharedArchiveFile=" + archive); // as `make run` does, once `make build` made it
    }
    // Steady state unless a test asks for the warm-up after start (a later flag wins): removals
    // in the first seconds would otherwise wait for it (decision 20).
    // The Nacos HTTP port on any free port unless a test names one: port - 1000 may be taken.
    args.addAll(List.of("-jar", JAR.toString(),
        "--host", host, "--port", Integer.toString(port), "--shutdown-grace", "2s", "--warm-up", "0s",
        "--http-port", "0"));
    args.addAll(List.of(flags));
    return new ServerProcess(host, port, args, System.nanoTime());
  }

  /** The flags in server/jvm.options, which `make run` starts the server with. */
  static List<String> shippedJvmOptions() {
    Path options = JAR.toAbsolutePath().getParent().getParent().resolve("jvm.options");
    try {
      return java.util.Arrays.stream(Files.readString(options).trim().split("\\s+")).filter(f -> !f.isEmpty()).toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot read " + options, e);
    }
  }

  String address() {
    return host + ":" + port;
  }

  /** Polls gRPC health until SERVING; returns the time from launch to SERVING. */
  Duration awaitServing(Duration atMost) {
    // A plain TCP probe first: a gRPC channel that was refused waits out its reconnect
    // back-off (about 1 s) and would add it to the measured start-up time.
    await().atMost(atMost).pollInterval(Duration.ofMillis(2)).until(() -> {
      if (!process.isAlive()) {
        throw new IllegalStateException("server exited:\n" + output());
      }
      try (java.net.Socket probe = new java.net.Socket()) {
        probe.connect(new java.net.InetSocketAddress(host, port), 1000);
        return true;
      } catch (java.io.IOException refused) {
        return false;
      }
    });
    ManagedChannel ch = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
    try {
      await().atMost(atMost).pollInterval(Duration.ofMillis(5)).ignoreExceptions().until(() -> {
        if (!process.isAlive()) {
          throw new IllegalStateException("server exited:\n" + output());
        }
        return HealthGrpc.newBlockingStub(ch).withDeadlineAfter(1, TimeUnit.SECONDS)
            .check(HealthCheckRequest.getDefaultInstance()).getStatus() == ServingStatus.SERVING;
      });
      return Duration.ofNanos(System.nanoTime() - startedNanos);
    } finally {
      ch.shutdownNow();
    }
  }

  /** SIGTERM and wait for the process to exit. */
  void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(Timing.seconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("server did not stop on SIGTERM:\n" + output());
    }
  }

  /** Resident set size from /proc, in KiB (Linux). */
  long rssKib() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("\\D+", ""));
      }
    }
    throw new IllegalStateException("no VmRSS");
  }
}
