package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 9.1: a SIGTERM restart with 200 SDK clients. The stopping server asked every session to
 * reconnect but still accepted new sessions: 71–120 of 200 clients came back to it, were cut
 * when its 10 s grace ended, and their consumers saw a 20-instance service go to 0 for seconds;
 * and the server always took the whole grace. Now it refuses new sessions (UNAVAILABLE: the
 * SDK tries again, here or elsewhere) and exits once its sessions have left.
 */
class RestartWithManyClientsTest {

  private static final String SERVICE = "restart-fleet";
  private static final int PROVIDERS = 20;
  private static final int CONSUMERS = 180;

  private final ScheduledExecutorService shared = Executors.newScheduledThreadPool(2);
  private final List<RosterClient> clients = new ArrayList<>();
  private ServerProcess server;

  @AfterEach
  void cleanUp() throws Exception {
    clients.parallelStream().forEach(c -> {
      try {
        c.close();
      } catch (RuntimeException ignored) {
        // Best effort.
      }
    });
    shared.shutdownNow();
    if (server != null) {
      server.close();
    }
  }

  private RosterClient client(String name) {
    RosterClient c = RosterClient.builder().serverAddresses(server.address()).clientName(name)
        .scheduler(shared).drainTimeout(Duration.ZERO).requestTimeout(Timing.seconds(5)).build();
    clients.add(c);
    return c;
  }

  @Test
  void aSigtermRestartWith200ClientsShowsConsumersNoEmptyList() throws Exception {
    int port = Ports.free();
    server = ServerProcess.start("127.0.0.1", port, "--shutdown-grace", "10s");
    List<RosterClient> providers = new ArrayList<>();
    for (int i = 0; i < PROVIDERS; i++) {
      RosterClient p = client("provider-" + i);
      p.registerInstance(SERVICE, Instance.of("10.20.0." + (i + 1), 8080));
      providers.add(p);
    }
    List<Watch> consumers = new ArrayList<>();
    for (int i = 0; i < CONSUMERS; i++) {
      Watch w = new Watch();
      client("consumer-" + i).subscribe(SERVICE, w::onEvent);
      consumers.add(w);
    }
    await().atMost(Timing.seconds(30)).until(() -> consumers.stream().allMatch(w -> w.last.get() == PROVIDERS));
    consumers.forEach(Watch::arm);

    long t0 = System.nanoTime();
    server.stop();
    Duration stopping = Duration.ofNanos(System.nanoTime() - t0);
    server = ServerProcess.start("127.0.0.1", port, "--shutdown-grace", "10s");

    // Every client is back on the new server: one provider leaving reaches every consumer.
    await().atMost(Timing.seconds(30)).until(() -> fresh(port) == PROVIDERS);
    providers.get(0).deregisterInstance(SERVICE, "10.20.0.1", 8080);
    await().atMost(Timing.seconds(30)).until(() -> consumers.stream().allMatch(w -> w.last.get() == PROVIDERS - 1));

    long sawEmpty = consumers.stream().filter(w -> w.lowest.get() == 0).count();
    assertThat(sawEmpty).as("consumers that saw the service empty across the restart").isZero();
    assertThat(stopping).as("SIGTERM to exit, with a 10 s grace and every client told to move")
        .isLessThan(Timing.seconds(8));
  }

  /** What a fresh client, connected to the new server only, reads. */
  private int fresh(int port) {
    try (RosterClient probe = RosterClient.builder().serverAddresses("127.0.0.1:" + port)
        .drainTimeout(Duration.ZERO).pollEnabled(false).build()) {
      return probe.getAllInstances(SERVICE).size();
    } catch (RuntimeException notYet) {
      return -1;
    }
  }

  /** One consumer's view: the last list size, and the smallest seen once armed. */
  private static final class Watch {
    final AtomicInteger last = new AtomicInteger(-1);
    final AtomicInteger lowest = new AtomicInteger(Integer.MAX_VALUE);
    volatile boolean armed;

    void onEvent(InstancesChangeEvent e) {
      int n = e.instances().size();
      last.set(n);
      if (armed) {
        lowest.accumulateAndGet(n, Math::min);
      }
    }

    void arm() {
      armed = true;
    }
  }
}
