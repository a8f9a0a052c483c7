package io.roster.it;

import io.grpc.ConnectivityState;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthGrpc;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC application as its own process that knows nothing of Roster: a channel on an {@code
 * xds:///} target, configured by the xDS bootstrap file grpc-java finds itself ({@code
 * GRPC_XDS_BOOTSTRAP} or {@code -Dio.grpc.xds.bootstrap=FILE}), calling the health service of
 * whatever the channel resolves to. Args: target calls [follow]. Prints {@code OK <calls>} once
 * that many calls in a row succeeded and exits 0; until then, each new failure as {@code FAILED
 * <code>: <description>}, trying again whenever the channel's state changes (or after a second),
 * and exits 1 after 30 scaled seconds without success. With {@code follow} it stays on after its
 * first {@code OK}: for each line {@code n} on its standard input it makes n calls, printing
 * {@code OK n} or the first failure, until its input ends.
 */
public final class XdsClientMain {

  private XdsClientMain() {}

  public static void main(String[] args) throws Exception {
    String target = args[0];
    int calls = Integer.parseInt(args[1]);
    ManagedChannel channel = Grpc.newChannelBuilder(target, InsecureChannelCredentials.create()).build();
    HealthGrpc.HealthBlockingStub health = HealthGrpc.newBlockingStub(channel);
    long deadline = System.nanoTime() + Timing.seconds(30).toNanos();
    String last = "";
    while (System.nanoTime() - deadline < 0) {
      ConnectivityState state = channel.getState(true);
      try {
        for (int i = 0; i < calls; i++) {
          health.withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        }
        System.out.println("OK " + calls);
        System.out.flush();
        if (args.length > 2 && args[2].equals("follow")) {
          follow(health);
        }
        channel.shutdownNow();
        System.exit(0);
      } catch (StatusRuntimeException e) {
        String failure = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
        if (!failure.equals(last)) {
          System.out.println("FAILED " + failure);
          System.out.flush();
          last = failure;
        }
      }
      CountDownLatch changed = new CountDownLatch(1);
      channel.notifyWhenStateChanged(state, changed::countDown);
      changed.await(1, TimeUnit.SECONDS);
    }
    channel.shutdownNow();
    System.exit(1);
  }

  /** Makes the calls each line of the standard input asks for, until it ends. */
  private static void follow(HealthGrpc.HealthBlockingStub health) throws java.io.IOException {
    java.io.BufferedReader in = new java.io.BufferedReader(
        new java.io.InputStreamReader(System.in, java.nio.charset.StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      int n = Integer.parseInt(line.trim());
      try {
        for (int i = 0; i < n; i++) {
          health.withDeadlineAfter(5, TimeUnit.SECONDS).check(HealthCheckRequest.getDefaultInstance());
        }
        System.out.println("OK " + n);
      } catch (StatusRuntimeException e) {
        System.out.println("FAILED " + e.getStatus().getCode() + ": " + e.getStatus().getDescription());
      }
      System.out.flush();
    }
  }
}
