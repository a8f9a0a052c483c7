package io.roster.bench;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Roster server started from the built jar as a child process on 127.0.0.1, so that its
 * CPU time and RSS can be read from /proc and its heap from jcmd/jstat.
 */
final class LocalServer implements AutoCloseable {

  private static final long CLK_TCK = clockTicks();

  final Process process;
  final int port;
  final Path log;
  /** From just before the process was started to health SERVING. */
  final Duration startup;

  private LocalServer(Process process, int port, Path log, Duration startup) {
    this.process = process;
    this.port = port;
    this.log = log;
    this.startup = startup;
  }

  /**
   * Loads and JIT-warms the load generator's own gRPC client path (a failing health check on a
   * closed port), so that the first startup trial does not time the bench's class loading.
   */
  static void warmUpProbe() {
    int port = freePort();
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    try {
      for (int i = 0; i < 3; i++) {
        try {
          HealthGrpc.newBlockingStub(ch).withDeadlineAfter(1, TimeUnit.SECONDS)
              .check(HealthCheckRequest.getDefaultInstance());
        } catch (RuntimeException expected) {
          ch.resetConnectBackoff();
        }
      }
    } finally {
      ch.shutdownNow();
    }
  }

  static LocalServer start(Path jar, List<String> jvmFlags, Path logDir, String name) {
    int port = freePort();
    try {
      Files.createDirectories(logDir);
      Path log = logDir.resolve(name + "-server.log");
      long t0 = System.nanoTime();
      Process p = launch(jar, jvmFlags, "127.0.0.1", port, List.of(), log);
      awaitServing(p, "127.0.0.1", port, log, Duration.ofSeconds(30));
      return new LocalServer(p, port, log, Duration.ofNanos(System.nanoTime() - t0));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts the server jar on {@code host:port} as the bench runs it (shipped JVM flags, the CDS
   * archive, no warm-up, per-address limits lifted), with {@code serverFlags} after the bench's
   * own, output to {@code log}. Does not wait.
   */
  static Process launch(Path jar, List<String> jvmFlags, String host, int port, List<String> serverFlags, Path log)
      throws IOException {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar.toAbsolutePath() + " is missing: build it first (make build, or make bench)");
    }
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(jvmFlags);
    Path archive = jar.resolveSibling("roster-server.jsa");
    if (Files.isRegularFile(archive) && jvmFlags.stream().noneMatch(f -> f.startsWith("-XX:SharedArchiveFile"))) {
      cmd.add("-XX:SharedArchiveFile=" + archive); // what `make run` uses (see the Makefile)
    }
    // Steady state: no warm-up after start, so that a removal in the first seconds is measured
    // as it is pushed, not when the warm-up would have let clients apply it (decision 20).
    cmd.addAll(List.of("-jar", jar.toString(), "--host", host, "--port", Integer.toString(port),
        "--shutdown-grace", "2s", "--warm-up", "0s",
        // Every bench client connects from 127.0.0.1: lift the per-address limits (W8 has 10,000 sessions).
        "--max-sessions-per-address", "1000000", "--max-instances-per-address", "10000000",
        // The Nacos HTTP API on any free port: a random port - 1000 may be taken.
        "--http-port", "0"));
    cmd.addAll(serverFlags);
    return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
  }

  String address() {
    return "127.0.0.1:" + port;
  }

  long pid() {
    return process.pid();
  }

  /** Probes TCP every 2 ms until the port accepts, then gRPC health until SERVING. */
  static void awaitServing(Process p, String host, int port, Path log, Duration atMost) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (true) {
      check(p, log, deadline);
      try (Socket s = new Socket()) {
        s.connect(new InetSocketAddress(host, port), 100);
        break;
      } catch (IOException e) {
        parkMillis(2);
      }
    }
    ManagedChannel ch = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
    try {
      while (true) {
        check(p, log, deadline);
        try {
          if (HealthGrpc.newBlockingStub(ch).withDeadlineAfter(1, TimeUnit.SECONDS)
              .check(HealthCheckRequest.getDefaultInstance()).getStatus() == ServingStatus.SERVING) {
            return;
          }
        } catch (RuntimeException e) {
          ch.resetConnectBackoff();
        }
        parkMillis(2);
      }
    } finally {
      ch.shutdownNow();
    }
  }

  private static void check(Process p, Path log, long deadline) {
    if (!p.isAlive()) {
      throw new IllegalStateException("server exited with " + p.exitValue() + "; see " + log);
    }
    if (System.nanoTime() > deadline) {
      p.destroyForcibly();
      throw new IllegalStateException("server not SERVING in time; see " + log);
    }
  }

  private static void parkMillis(long ms) {
    java.util.concurrent.locks.LockSupport.parkNanos(ms * 1_000_000);
  }

  /** Resident set size, bytes (VmRSS). */
  long rssBytes() {
    return rssBytes(pid());
  }

  /** Resident set size of process {@code pid}, bytes (VmRSS). */
  static long rssBytes(long pid) {
    return statusKib(pid, "VmRSS:") * 1024;
  }

  /** Number of threads of the server process. */
  long threads() {
    return statusKib(pid(), "Threads:");
  }

  private static long statusKib(long pid, String field) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (line.startsWith(field)) {
          return Long.parseLong(line.replaceAll("\\D+", ""));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    throw new IllegalStateException("no " + field + " for pid " + pid);
  }

  /** User + system CPU time of the server process so far, milliseconds (from /proc/PID/stat). */
  long cpuMillis() {
    return cpuMillis(pid());
  }

  /** User + system CPU time of process {@code pid} so far, milliseconds (from /proc/PID/stat). */
  static long cpuMillis(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // after "pid (comm) ": state is field 3, utime field 14, stime field 15
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return ticks * 1000 / CLK_TCK;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Runs a full GC in the server ({@code jcmd PID GC.run}) and returns the heap in use after
   * it, bytes, as the sum of the survivor, eden and old "used" columns of {@code jstat -gc}.
   */
  long heapAfterGcBytes() {
    run("jcmd", Long.toString(pid()), "GC.run");
    String out = run("jstat", "-gc", Long.toString(pid()));
    String[] lines = out.trim().split("\n");
    String[] head = lines[0].trim().split("\\s+");
    String[] vals = lines[lines.length - 1].trim().split("\\s+");
    double kib = 0;
    for (int i = 0; i < head.length; i++) {
      if (head[i].equals("S0U") || head[i].equals("S1U") || head[i].equals("EU") || head[i].equals("OU")) {
        kib += Double.parseDouble(vals[i]);
      }
    }
    return (long) (kib * 1024);
  }

  static String run(String... cmd) {
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /**
   * Committed KiB per Native Memory Tracking category ({@code jcmd PID VM.native_memory summary}),
   * in the JVM's order; empty when the server runs without {@code -XX:NativeMemoryTracking}.
   */
  java.util.Map<String, Long> nativeMemoryKib() {
    java.util.Map<String, Long> out = new java.util.LinkedHashMap<>();
    String text;
    try {
      text = run("jcmd", Long.toString(pid()), "VM.native_memory", "summary");
    } catch (RuntimeException e) {
      return out;
    }
    java.util.regex.Matcher m = java.util.regex.Pattern
        .compile("(?m)^-\\s+(.+?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)").matcher(text);
    while (m.find()) {
      out.put(m.group(1).trim(), Long.parseLong(m.group(2)));
    }
    return out;
  }

  /** The JVM flags the server really runs with (final values of the ergonomics), from jcmd. */
  String vmFlags() {
    try {
      String out = run("jcmd", Long.toString(pid()), "VM.command_line");
      for (String line : out.split("\n")) {
        if (line.startsWith("jvm_args:")) {
          String flags = run("jcmd", Long.toString(pid()), "VM.flags");
          return line.substring("jvm_args:".length()).trim() + " | "
              + flags.substring(flags.indexOf('\n') + 1).trim();
        }
      }
      return "";
    } catch (RuntimeException e) {
      return "(jcmd failed: " + e.getMessage() + ")";
    }
  }

  /** SIGTERM, then SIGKILL after 15 s. */
  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(15, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long clockTicks() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
      return Long.parseLong(new String(p.getInputStream().readAllBytes()).trim());
    } catch (IOException | RuntimeException e) {
      return 100;
    }
  }
}
