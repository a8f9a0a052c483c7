package io.roster.bench;

import io.grpc.ChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.server.testing.process.Ports;
import io.roster.server.tls.Pki;
import io.roster.server.testing.process.ServerLauncher;
import io.roster.server.testing.process.ServerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A Roster server started from the built jar as a child process on 127.0.0.1 (a {@link
 * ServerProcess} of the bench's {@link #launcher}), so that its CPU time and RSS can be read from
 * /proc and its heap from jcmd/jstat.
 */
final class LocalServer implements AutoCloseable {

  final ServerProcess process;
  final int port;
  /** From just before the process was started to health SERVING. */
  final Duration startup;

  private LocalServer(ServerProcess process, Duration startup) {
    this.process = process;
    this.port = process.port;
    this.startup = startup;
  }

  /**
   * How the bench starts servers from {@code jar}: as {@code make run} with {@code jvmFlags}, the
   * per-address limits lifted, output to {@code logDir}; closed with SIGTERM, SIGKILL after 15 s.
   */
  static ServerLauncher launcher(Path jar, List<String> jvmFlags, Path logDir) {
    return ServerLauncher.of(jar, jvmFlags, logDir)
        // Every bench client connects from 127.0.0.1: lift the per-address limits (W8 has 10,000 sessions).
        .withServerFlags(List.of("--max-sessions-per-address", "1000000", "--max-instances-per-address", "10000000"))
        .withCloseGrace(Duration.ofSeconds(15));
  }

  /**
   * Loads and JIT-warms the load generator's own gRPC client path (a failing health check on a
   * closed port), so that the first startup trial does not time the bench's class loading.
   */
  static void warmUpProbe() {
    int port = Ports.free();
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

  /**
   * A server with its HTTP port where Nacos applications look for it (the gRPC port − 1000, on
   * a free gRPC port above 1000), its output in {@code logDir/NAME-server.log}; returns once
   * SERVING. Its HTTP port is {@code port - 1000}.
   */
  static ServerProcess withHttpPort(Path jar, List<String> jvmFlags, Path logDir, String name) {
    int port = Ports.freeForNacos();
    return launcher(jar, jvmFlags, logDir).launch(name + "-server", "127.0.0.1", port, List.of(),
        List.of("--http-port", "auto")).serving();
  }

  /** Starts a server on a free port, its output in {@code logDir/NAME-server.log}; returns once SERVING. */
  static LocalServer start(Path jar, List<String> jvmFlags, Path logDir, String name) {
    return start(jar, jvmFlags, logDir, name, null);
  }

  /** The same, on TLS with {@code tls}'s files when given. */
  static LocalServer start(Path jar, List<String> jvmFlags, Path logDir, String name, @Nullable Tls tls) {
    return start(jar, jvmFlags, logDir, name, tls, null);
  }

  /** The same, with {@code authFile} as its --auth-file when given. */
  static LocalServer start(Path jar, List<String> jvmFlags, Path logDir, String name, @Nullable Tls tls,
      @Nullable Path authFile) {
    ServerLauncher launcher = launcher(jar, jvmFlags, logDir);
    List<String> flags = new java.util.ArrayList<>();
    if (tls != null) {
      launcher = launcher.withProbe(tls.credentials());
      flags.addAll(List.of("--tls-cert", tls.cert.toString(), "--tls-key", tls.key.toString()));
    }
    if (authFile != null) {
      flags.addAll(List.of("--auth-file", authFile.toString()));
    }
    // Durable state on disk, as make run keeps it: a fresh directory for each server.
    try {
      flags.addAll(List.of("--data-dir", java.nio.file.Files.createTempDirectory(logDir, name + "-data").toString()));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    ServerProcess p = launcher.launch(name + "-server", "127.0.0.1", Ports.free(), List.of(), flags).serving();
    return new LocalServer(p, Duration.ofNanos(System.nanoTime() - p.startedNanos));
  }

  /**
   * An auth file in {@code dir} with one static token that may do everything (bench --auth);
   * returns the token.
   */
  static String authFile(Path dir, Path file) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.io.PrintStream print = new java.io.PrintStream(out, true, java.nio.charset.StandardCharsets.UTF_8);
    if (io.roster.server.auth.AuthCommand.main(List.of("init", file.toString()), print, System.err) != 0
        || io.roster.server.auth.AuthCommand.main(List.of("token", file.toString(), "bench", "admin@*"), print,
            System.err) != 0) {
      throw new IllegalStateException("could not write the bench's auth file " + file + " in " + dir);
    }
    String[] lines = out.toString(java.nio.charset.StandardCharsets.UTF_8).trim().split("\n", -1);
    return lines[lines.length - 1].trim();
  }

  /** A throwaway CA and a server certificate for 127.0.0.1, as PEM files in a directory (bench --tls). */
  static final class Tls {
    final Path ca;
    final Path cert;
    final Path key;

    Tls(Path dir) {
      this.ca = dir.resolve("ca.crt");
      this.cert = dir.resolve("server.crt");
      this.key = dir.resolve("server.key");
      Pki.Authority authority = Pki.newAuthority("roster-bench-ca");
      try {
        authority.writeCertificatePem(ca);
        authority.issue("roster-bench", List.of("127.0.0.1", "localhost")).writePem(cert, key);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    ChannelCredentials credentials() {
      try {
        return TlsChannelCredentials.newBuilder().trustManager(ca.toFile()).build();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  String address() {
    return process.address();
  }

  long pid() {
    return process.pid();
  }

  /** Resident set size, bytes (VmRSS). */
  long rssBytes() {
    return process.rssKib() * 1024;
  }

  /** Number of threads of the server process. */
  long threads() {
    return process.threads();
  }

  /** User + system CPU time of the server process so far, milliseconds (from /proc/PID/stat). */
  long cpuMillis() {
    return process.cpuMillis();
  }

  /**
   * Runs a full GC in the server ({@code jcmd PID GC.run}) and returns the heap in use after
   * it, bytes, as the sum of the survivor, eden and old "used" columns of {@code jstat -gc}.
   */
  long heapAfterGcBytes() {
    run("jcmd", Long.toString(pid()), "GC.run");
    String out = run("jstat", "-gc", Long.toString(pid()));
    String[] lines = out.trim().split("\n", -1);
    String[] head = lines[0].trim().split("\\s+", -1);
    String[] vals = lines[lines.length - 1].trim().split("\\s+", -1);
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
      String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
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
      for (String line : out.split("\n", -1)) {
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
    try {
      process.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
