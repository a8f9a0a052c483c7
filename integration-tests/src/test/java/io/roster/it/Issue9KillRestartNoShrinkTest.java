package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.config.ServerConfig;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 9, item 2: <b>a kill -9 restart showed partial lists.</b> After the server crashed and a
 * new one started on the same port, consumers reconnected before every provider had, and most
 * of them saw a 20-instance service shrink (20 → 8) before it grew back.
 *
 * <p>Scenario: the server jar as a process; {@value #PROVIDERS} providers, each an SDK client
 * registering one instance of one service; {@value #CONSUMERS} consumers subscribed to it (SDK
 * clients in this JVM sharing one scheduler, so only the server dies). Every listener event is
 * recorded. The server is killed with SIGKILL and a new one is started on the same port. When
 * the new server has every provider again, one more instance (a marker) is registered, and the
 * test waits until every consumer shows all {@value #PROVIDERS} plus the marker: from then on no
 * consumer holds anything back. No consumer may ever have seen fewer than {@value #PROVIDERS}
 * instances in between.
 *
 * <p>The servers run with the default warm-up (decision 20). Before it existed, 98 of 100
 * consumers saw the list shrink (to 1 at worst); with {@code --warm-up 0s} all 100 do.
 */
class Issue9KillRestartNoShrinkTest {

  private static final String SERVICE = "warm-up-demo";
  static final int PROVIDERS = 20;
  static final int CONSUMERS = 100;

  /** The server's default warm-up (ServerProcess turns it off unless asked). */
  private static final String[] WARM_UP =
      {"--warm-up", ServerConfig.formatDuration(ServerConfig.defaults().warmUp())};

  private ServerProcess server;
  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(2);
  private final ExecutorService listeners = Executors.newFixedThreadPool(2);
  private final List<RosterClient> clients = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (RosterClient c : clients) {
      c.close();
    }
    scheduler.shutdownNow();
    listeners.shutdownNow();
    if (server != null) {
      server.close();
    }
  }

  private RosterClient client(String name) {
    RosterClient c = RosterClient.builder()
        .serverAddresses(server.address())
        .clientName(name)
        .scheduler(scheduler)
        .listenerExecutor(listeners)
        .drainTimeout(Duration.ZERO)
        .build();
    clients.add(c);
    return c;
  }

  /** One consumer: its latest list, and the fewest instances it showed since {@link #arm}. */
  private static final class Consumer {
    volatile List<Instance> latest = List.of();
    volatile boolean armed;
    final AtomicInteger fewestSinceArmed = new AtomicInteger(Integer.MAX_VALUE);

    void onEvent(InstancesChangeEvent e) {
      latest = e.instances();
      if (armed) {
        fewestSinceArmed.accumulateAndGet(e.instances().size(), Math::min);
      }
    }

    void arm() {
      armed = true;
    }
  }

  @Test
  void consumersSeeNoShrinkAcrossAKillAndRestartOfTheServer() throws Exception {
    int port = Ports.free();
    server = ServerProcess.start("127.0.0.1", port, WARM_UP);
    for (int i = 0; i < PROVIDERS; i++) {
      client("provider-" + i).registerInstance(SERVICE, Instance.of("10.9.0." + (i + 1), 8000 + i));
    }
    List<Consumer> consumers = new ArrayList<>();
    for (int i = 0; i < CONSUMERS; i++) {
      Consumer c = new Consumer();
      consumers.add(c);
      client("consumer-" + i).subscribe(SERVICE, c::onEvent);
    }
    Awaitility.await().atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(10))
        .until(() -> consumers.stream().allMatch(c -> c.latest.size() == PROVIDERS));
    consumers.forEach(Consumer::arm);

    long killedAt = System.nanoTime();
    server.kill9();
    server = ServerProcess.start("127.0.0.1", port, WARM_UP);
    long servingMs = (System.nanoTime() - killedAt) / 1_000_000;

    // Every provider is back on the new server (its redo), whatever the consumers show.
    ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    try {
      Awaitility.await().atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(20)).until(() ->
          RegistryGrpc.newBlockingStub(ch).withDeadlineAfter(2, TimeUnit.SECONDS)
              .queryInstances(QueryInstancesRequest.newBuilder()
                  .setService(ServiceKey.newBuilder().setName(SERVICE)).build())
              .getServiceInfo().getInstancesCount() == PROVIDERS);
    } finally {
      ch.shutdownNow();
    }
    long providersBackMs = (System.nanoTime() - killedAt) / 1_000_000;
    // A marker every consumer must see: then each has a state of the new server with everyone.
    client("marker").registerInstance(SERVICE, Instance.of("10.9.1.1", 9000));
    Awaitility.await().atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(10))
        .until(() -> consumers.stream().allMatch(c -> c.latest.size() == PROVIDERS + 1));
    long settledMs = (System.nanoTime() - killedAt) / 1_000_000;

    int shrunk = 0;
    int fewest = Integer.MAX_VALUE;
    for (Consumer c : consumers) {
      int f = c.fewestSinceArmed.get();
      fewest = Math.min(fewest, f);
      if (f < PROVIDERS) {
        shrunk++;
      }
    }
    System.out.printf("Issue9KillRestartNoShrinkTest: %d of %d consumers saw fewer than %d instances"
        + " after the restart (fewest: %s); after the kill: new server SERVING %d ms, providers back %d ms,"
        + " every consumer on the new server %d ms%n", shrunk, CONSUMERS, PROVIDERS,
        fewest == Integer.MAX_VALUE ? "no event" : Integer.toString(fewest), servingMs, providersBackMs, settledMs);
    assertThat(shrunk).as("consumers that saw fewer than %d instances (fewest: %d)", PROVIDERS, fewest)
        .isZero();
  }
}
