package io.roster.server;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The container health check (docker/Dockerfile): {@code java -cp roster-server.jar
 * io.roster.server.HealthProbe [port]} asks {@code grpc.health.v1.Health/Check} for the whole
 * server (the empty service name) on {@code 127.0.0.1:port} (default 9848), with a 2 s deadline.
 * It prints the answer on one line and exits 0 when it is SERVING, 1 otherwise: NOT_SERVING
 * (starting, draining or stopping), no answer within the deadline, a refused connection, a bad
 * argument. Docker reads 1 as "unhealthy" (2 is reserved), so the probe never exits 2.
 *
 * <p>The runtime image has no grpcurl; this class needs only what the server jar has already.
 */
public final class HealthProbe {

  static final int DEFAULT_PORT = 9848;
  static final Duration DEADLINE = Duration.ofSeconds(2);

  private HealthProbe() {}

  public static void main(String[] args) {
    System.exit(run(args, DEADLINE, System.out));
  }

  /** Probes {@code 127.0.0.1}; returns the exit status (0 = SERVING) after printing the answer to {@code out}. */
  static int run(String[] args, Duration deadline, PrintStream out) {
    int port;
    try {
      port = port(args);
    } catch (IllegalArgumentException e) {
      out.println("usage: HealthProbe [port]: " + e.getMessage());
      return 1;
    }
    String answer = check("127.0.0.1", port, deadline);
    out.println("127.0.0.1:" + port + " " + answer);
    return answer.equals(ServingStatus.SERVING.name()) ? 0 : 1;
  }

  /**
   * One {@code Health/Check} on a channel of its own; returns the serving status's name, or the
   * gRPC status code and description when the call failed (never throws for a failed call).
   */
  static String check(String host, int port, Duration deadline) {
    ManagedChannel channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
    try {
      return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
          .check(HealthCheckRequest.getDefaultInstance()).getStatus().name();
    } catch (StatusRuntimeException e) {
      String description = e.getStatus().getDescription();
      return e.getStatus().getCode() + (description == null ? "" : ": " + description);
    } finally {
      channel.shutdownNow();
    }
  }

  private static int port(String[] args) {
    if (args.length == 0) {
      return DEFAULT_PORT;
    }
    if (args.length > 1) {
      throw new IllegalArgumentException("one argument expected, got " + args.length);
    }
    try {
      int port = Integer.parseInt(args[0]);
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException("port: " + args[0] + " (expected: 1..65535)");
  }
}
