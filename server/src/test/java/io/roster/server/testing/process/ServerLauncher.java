package io.roster.server.testing.process;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.roster.server.testing.TestTime;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How server processes are started from the built jar: the JVM flags, the server flags every one
 * gets, where the logs go, and how long a start, a stop and a close may take. {@link #forTests()}
 * is the integration tests' (the JVM flags of the tests' child JVMs and server/jvm.options, every
 * bound scaled by {@link TestTime}, killed when closed); the bench makes its own with {@link #of}.
 *
 * <p>Every server starts as {@code make run} starts it (its JVM flags, the CDS archive beside the
 * jar when there is one; {@link #forTests()} records it first when it is missing or older than the
 * jar), plus what a test or a bench needs: the steady state at once
 * ({@code --warm-up 0s}; a later flag wins), a short shutdown grace, and the Nacos HTTP port on
 * any free port ({@code --http-port 0}: port - 1000 may be taken).
 */
public final class ServerLauncher {

  /** The CDS archive's name, beside the jar (as {@code make build} writes it). */
  private static final String ARCHIVE = "roster-server.jsa";

  private final Path jar;
  private final List<String> jvmFlags;
  private final List<String> serverFlags;
  private final Path logDir;
  private final Duration startTimeout;
  private final Duration stopTimeout;
  private final Duration closeGrace;
  private final ChannelCredentials probe;

  private ServerLauncher(Path jar, List<String> jvmFlags, List<String> serverFlags, Path logDir,
      Duration startTimeout, Duration stopTimeout, Duration closeGrace) {
    this(jar, jvmFlags, serverFlags, logDir, startTimeout, stopTimeout, closeGrace, InsecureChannelCredentials.create());
  }

  private ServerLauncher(Path jar, List<String> jvmFlags, List<String> serverFlags, Path logDir,
      Duration startTimeout, Duration stopTimeout, Duration closeGrace, ChannelCredentials probe) {
    this.jar = jar;
    this.jvmFlags = List.copyOf(jvmFlags);
    this.serverFlags = List.copyOf(serverFlags);
    this.logDir = logDir;
    this.startTimeout = startTimeout;
    this.stopTimeout = stopTimeout;
    this.closeGrace = closeGrace;
    this.probe = probe;
  }

  /** The integration tests' launcher, made once per JVM. */
  public static ServerLauncher forTests() {
    return ForTests.LAUNCHER;
  }

  private static final class ForTests {
    static final ServerLauncher LAUNCHER = make();

    private static ServerLauncher make() {
      Path jar = Path.of(System.getProperty("roster.server.jar", "../server/target/roster-server.jar"));
      recordArchive(jar);
      List<String> jvm = new ArrayList<>(JavaProcess.TEST_JVM_FLAGS);
      jvm.addAll(shippedJvmOptions(jar)); // as make run
      return new ServerLauncher(jar, jvm, List.of(), JavaProcess.LOGS, TestTime.seconds(30), TestTime.seconds(20),
          Duration.ZERO);
    }
  }

  /**
   * Records the class-data-sharing archive beside {@code jar} by the training run {@code make build}
   * does (start, SERVING, stop; the JVM writes the archive on exit), unless one at least as new as
   * the jar is there already. Every server launched from the jar then loads its classes from it:
   * about half the CPU of a start, which counts when three members start at once on a small
   * machine. A run that fails leaves no archive, and the servers start without one, as before.
   */
  static void recordArchive(Path jar) {
    Path archive = jar.resolveSibling(ARCHIVE);
    try {
      if (!Files.isRegularFile(jar) || (Files.isRegularFile(archive)
          && Files.getLastModifiedTime(archive).compareTo(Files.getLastModifiedTime(jar)) >= 0)) {
        return;
      }
      Files.deleteIfExists(archive);
      long started = System.nanoTime();
      Process training = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-XX:ArchiveClassesAtExit=" + archive.toAbsolutePath(), "-jar", jar.toString(), "--host", "127.0.0.1",
          "--port", "0", "--http-port", "0", "--data-dir", "", "--exit-when-ready")
          .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
      boolean exited = training.waitFor(60, TimeUnit.SECONDS);
      if (!exited || training.exitValue() != 0) {
        training.destroyForcibly().waitFor();
        Files.deleteIfExists(archive);
        System.out.println("Could not record " + archive + "; servers start without it");
        return;
      }
      System.out.printf("Recorded %s in %d ms%n", archive, (System.nanoTime() - started) / 1_000_000);
    } catch (IOException e) {
      System.out.println("Could not record " + archive + " (" + e + "); servers start without it");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Servers from {@code jar} with {@code jvmFlags}, their output in {@code logDir}; a start may take
   * 30 s, a stop 20 s; closed with SIGKILL (see {@link #withCloseGrace}).
   */
  public static ServerLauncher of(Path jar, List<String> jvmFlags, Path logDir) {
    return new ServerLauncher(jar, jvmFlags, List.of(), logDir, Duration.ofSeconds(30), Duration.ofSeconds(20),
        Duration.ZERO);
  }

  /** The same, with {@code flags} given to every server after the launcher's own (before a caller's). */
  public ServerLauncher withServerFlags(List<String> flags) {
    return new ServerLauncher(jar, jvmFlags, flags, logDir, startTimeout, stopTimeout, closeGrace, probe);
  }

  /**
   * The same, closing a server with SIGTERM and SIGKILL only if it has not exited after {@code
   * grace}; {@link Duration#ZERO}: SIGKILL at once.
   */
  public ServerLauncher withCloseGrace(Duration grace) {
    return new ServerLauncher(jar, jvmFlags, serverFlags, logDir, startTimeout, stopTimeout, grace, probe);
  }

  /**
   * The same, asking a server's health over {@code credentials} while it starts (TLS for a server
   * given {@code --tls-cert}; with a client certificate when it is given {@code --tls-client-ca}).
   * Default: plaintext.
   */
  public ServerLauncher withProbe(ChannelCredentials credentials) {
    return new ServerLauncher(jar, jvmFlags, serverFlags, logDir, startTimeout, stopTimeout, closeGrace, credentials);
  }

  /** How {@link ServerProcess#serving()} connects to ask the server's health. */
  ChannelCredentials probe() {
    return probe;
  }

  /** How long {@link ServerProcess#serving()} waits for health SERVING. */
  public Duration startTimeout() {
    return startTimeout;
  }

  Duration stopTimeout() {
    return stopTimeout;
  }

  Duration closeGrace() {
    return closeGrace;
  }

  Path logDir() {
    return logDir;
  }

  /** The flags in server/jvm.options (beside the jar's target/), which {@code make run} starts the server with. */
  public static List<String> shippedJvmOptions(Path jar) {
    Path options = jar.toAbsolutePath().getParent().getParent().resolve("jvm.options");
    try {
      return Arrays.stream(Files.readString(options).trim().split("\\s+")).filter(f -> !f.isEmpty()).toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + options, e);
    }
  }

  /** Starts a server on {@code host:port} and waits until health says SERVING. */
  public ServerProcess start(String host, int port, String... flags) {
    return launch(host, port, flags).serving();
  }

  /** Starts a server on {@code host:port} without waiting. */
  public ServerProcess launch(String host, int port, String... flags) {
    return launch(null, host, port, List.of(), List.of(flags));
  }

  /**
   * Starts a server on {@code host:port} without waiting: {@code extraJvmFlags} after the
   * launcher's, {@code flags} after the server flags of the launcher. Its output goes to
   * {@code logName}.log in the log directory; a null name is {@code server-PORT-NANOS}, a file of
   * its own for every start.
   */
  public ServerProcess launch(String logName, String host, int port, List<String> extraJvmFlags, List<String> flags) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar.toAbsolutePath() + " is missing: build the server first (make build)");
    }
    long started = System.nanoTime();
    List<String> args = new ArrayList<>(jvmFlags);
    args.addAll(extraJvmFlags);
    Path archive = jar.resolveSibling(ARCHIVE);
    if (Files.isRegularFile(archive) && args.stream().noneMatch(f -> f.startsWith("-XX:SharedArchiveFile"))) {
      args.add("-XX:SharedArchiveFile=" + archive); // as `make run` does, once `make build` made it
    }
    // Steady state unless a caller asks for the warm-up after start (a later flag wins): removals
    // in the first seconds would otherwise wait for it (decision 20). Nothing on disk unless a
    // caller gives a --data-dir: servers of one test run side by side.
    args.addAll(List.of("-jar", jar.toString(),
        "--host", host, "--port", Integer.toString(port), "--shutdown-grace", "2s", "--warm-up", "0s",
        "--http-port", "0", "--data-dir", ""));
    args.addAll(serverFlags);
    args.addAll(flags);
    String name = logName != null ? logName : "server-" + port + "-" + System.nanoTime();
    return new ServerProcess(this, host, port, logDir.resolve(name + ".log"), args, started);
  }
}
