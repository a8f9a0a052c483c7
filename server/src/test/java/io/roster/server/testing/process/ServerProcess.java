package io.roster.server.testing.process;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The built server jar as a real process on a loopback address, started by a {@link
 * ServerLauncher}. The static methods start one as the integration tests do ({@link
 * ServerLauncher#forTests()}).
 */
public final class ServerProcess extends JavaProcess {

  public final String host;
  public final int port;
  /** {@link System#nanoTime()} just before the process was started. */
  public final long startedNanos;
  private final ServerLauncher launcher;

  ServerProcess(ServerLauncher launcher, String host, int port, Path log, List<String> javaArgs, long startedNanos) {
    super(log, javaArgs);
    this.launcher = launcher;
    this.host = host;
    this.port = port;
    this.startedNanos = startedNanos;
  }

  /** Starts a server as the tests do and waits until health says SERVING. */
  public static ServerProcess start(String host, int port, String... flags) {
    return ServerLauncher.forTests().start(host, port, flags);
  }

  /** Starts a server as the tests do, without waiting. */
  public static ServerProcess launch(String host, int port, String... flags) {
    return ServerLauncher.forTests().launch(host, port, flags);
  }

  /** Starts a server as the tests do, without waiting, with JVM flags after the shipped ones. */
  public static ServerProcess launch(List<String> jvmFlags, String host, int port, String... flags) {
    return ServerLauncher.forTests().launch(null, host, port, jvmFlags, List.of(flags));
  }

  public String address() {
    return host + ":" + port;
  }

  /**
   * The HTTP port the server bound (the tests start it with {@code --http-port 0}), from its
   * start-up line; throws when the output names none (a server not yet serving, or without one).
   */
  public int httpPort() {
    String marker = "Nacos v1 HTTP API on " + host + ":";
    int port = -1;
    try {
      // The last such line: a member started again may write to the same file.
      for (String line : java.nio.file.Files.readAllLines(log)) {
        int at = line.indexOf(marker);
        if (at >= 0) {
          String rest = line.substring(at + marker.length()).trim();
          int end = 0;
          while (end < rest.length() && Character.isDigit(rest.charAt(end))) {
            end++;
          }
          port = Integer.parseInt(rest.substring(0, end));
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    if (port > 0) {
      return port;
    }
    throw new IllegalStateException("server " + address() + " names no HTTP port in " + log.toAbsolutePath());
  }

  /**
   * Waits until SERVING, at most the launcher's start timeout; returns this. A server that does
   * not get there is closed.
   */
  public ServerProcess serving() {
    try {
      awaitServing(launcher.startTimeout());
      return this;
    } catch (RuntimeException | Error e) {
      try {
        close();
      } catch (InterruptedException interrupted) {
        Thread.currentThread().interrupt();
      }
      throw e;
    }
  }

  /**
   * Polls gRPC health until SERVING; returns the time from launch to SERVING. Throws when the
   * process exits first or {@code atMost} passes.
   */
  public Duration awaitServing(Duration atMost) {
    long deadline = System.nanoTime() + atMost.toNanos();
    // A plain TCP probe first: a gRPC channel that was refused waits out its reconnect
    // back-off (about 1 s) and would add it to the measured start-up time.
    while (!accepts()) {
      checkStarting(deadline, atMost);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
    }
    ManagedChannel ch = NettyChannelBuilder.forAddress(host, port, launcher.probe()).build();
    try {
      while (true) {
        checkStarting(deadline, atMost);
        try {
          if (HealthGrpc.newBlockingStub(ch).withDeadlineAfter(1, TimeUnit.SECONDS)
              .check(HealthCheckRequest.getDefaultInstance()).getStatus() == ServingStatus.SERVING) {
            return Duration.ofNanos(System.nanoTime() - startedNanos);
          }
        } catch (RuntimeException notYet) {
          ch.resetConnectBackoff();
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
      }
    } finally {
      ch.shutdownNow();
    }
  }

  /**
   * Waits until the client port accepts connections, SERVING or not (a member waiting to be
   * added to its group listens, and serves nothing); returns the time from launch. Throws when
   * the process exits first or {@code atMost} passes.
   */
  public Duration awaitListening(Duration atMost) {
    long deadline = System.nanoTime() + atMost.toNanos();
    while (!accepts()) {
      checkStarting(deadline, atMost);
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
    }
    return Duration.ofNanos(System.nanoTime() - startedNanos);
  }

  private boolean accepts() {
    try (Socket probe = new Socket()) {
      probe.connect(new InetSocketAddress(host, port), 1000);
      return true;
    } catch (IOException refused) {
      return false;
    }
  }

  private void checkStarting(long deadline, Duration atMost) {
    if (!process.isAlive()) {
      throw new IllegalStateException("server " + address() + " exited with " + process.exitValue()
          + " before SERVING; its output: " + log.toAbsolutePath());
    }
    if (System.nanoTime() - deadline > 0) {
      throw new IllegalStateException("server " + address() + " not SERVING within " + atMost.toMillis()
          + " ms; its output: " + log.toAbsolutePath());
    }
  }

  /** SIGTERM and wait for the process to exit (at most the launcher's stop timeout). */
  public void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(launcher.stopTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("server " + address() + " did not stop within " + launcher.stopTimeout().toMillis()
          + " ms of SIGTERM; its output: " + log.toAbsolutePath());
    }
  }

  /** SIGTERM without waiting. */
  void terminate() {
    process.destroy();
  }

  /**
   * Stops the process if it still runs: SIGKILL, or with the launcher's close grace SIGTERM first
   * and SIGKILL only if it has not exited by then.
   */
  @Override
  public void close() throws InterruptedException {
    Duration grace = launcher.closeGrace();
    try {
      if (!grace.isZero() && process.isAlive()) {
        process.destroy();
        process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      super.close();
    }
  }
}
