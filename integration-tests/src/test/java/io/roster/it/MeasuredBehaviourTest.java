package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.DrainResult;
import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.Listener;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The correctness side of {@link Measurements}, at small sizes, in {@code make test}: the
 * figures there are reports, but what they measure must also be right, and that is asserted
 * here with no timing at all. Real server process, SDK clients in this JVM.
 */
class MeasuredBehaviourTest {

  private ServerProcess server;

  @BeforeEach
  void start() {
    server = ServerProcess.start("127.0.0.1", Ports.free());
  }

  @AfterEach
  void stop() throws Exception {
    server.close();
  }

  /**
   * Drain round trip with 10 and then 100 subscribers (push only, one shared listener executor
   * and scheduler), two trials each: each trial registers a fresh instance, waits until every
   * subscriber's cache holds it, drains, and the drain must report every subscriber notified and
   * acked, none timed out or disconnected; when it returns, no subscriber's cache still lists
   * the instance.
   */
  @Test
  void drainIsAckedByEverySubscriberWithTenAndAHundred() {
    ExecutorService listeners = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "it-drain-listener");
      t.setDaemon(true);
      return t;
    });
    ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1, r -> {
      Thread t = new Thread(r, "it-drain-scheduler");
      t.setDaemon(true);
      return t;
    });
    scheduler.setRemoveOnCancelPolicy(true);
    List<RosterClient> subs = new ArrayList<>();
    try (RosterClient provider = RosterClient.builder().serverAddresses(server.address())
        .clientName("it-drain-provider").drainTimeout(Duration.ZERO).build()) {
      for (int i = 0; i < 100; i++) {
        subs.add(RosterClient.builder().serverAddresses(server.address()).clientName("it-drain-sub")
            .listenerExecutor(listeners).scheduler(scheduler).pollEnabled(false)
            .requestTimeout(Timing.seconds(10)).build());
      }
      for (int n : new int[] {10, 100}) {
        String service = "it-drain-" + n;
        List<RosterClient> group = subs.subList(0, n);
        group.forEach(c -> c.subscribe(service, e -> { }));
        for (int trial = 0; trial < 2; trial++) {
          int port = 23000 + trial;
          provider.registerInstance(service, Instance.of("10.9.0.4", port));
          Awaitility.await().atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(10)).until(() ->
              group.stream().allMatch(c -> c.getAllInstances(service).stream().anyMatch(x -> x.port() == port)));

          DrainResult r = provider.drain(Timing.seconds(10));

          assertThat(r).as("drain of %s, trial %d", service, trial).isEqualTo(new DrainResult(n, n, 0, 0));
          assertThat(group).as("subscribers still listing %s:%d after the drain", service, port)
              .noneMatch(c -> c.getAllInstances(service).stream().anyMatch(x -> x.port() == port));
        }
      }
    } finally {
      subs.forEach(RosterClient::close);
      scheduler.shutdownNow();
      listeners.shutdownNow();
    }
  }

  /**
   * Standalone server restart (SIGTERM, a new process on the same port) with a provider process
   * and a push-only subscriber here (default empty hold): after the restart the subscriber's
   * cache lists the provider at a revision of the new server (newer than before the restart;
   * revisions are wall-clock microseconds), and the last thing its listener was told lists the
   * provider.
   */
  @Test
  void afterARestartTheSubscriberIsConfirmedByTheNewServer() throws Exception {
    String service = "it-restart";
    int providerPort = 24000;
    int serverPort = server.port;
    List<InstancesChangeEvent> seen = new CopyOnWriteArrayList<>();
    Listener listener = seen::add;
    try (ProviderProcess provider = new ProviderProcess(server.address(), service, "10.9.0.5", providerPort);
        RosterClient sub = RosterClient.builder().serverAddresses(server.address()).clientName("it-restart-sub")
            .pollEnabled(false).build()) {
      provider.awaitRegistered();
      sub.subscribe(service, listener);
      Awaitility.await().atMost(Timing.seconds(10)).until(() -> !seen.isEmpty() && lists(seen.get(seen.size() - 1), providerPort));
      InstancesChangeEvent before = Subscriber.cached(sub, service);
      assertThat(before.instances()).as("provider listed before the restart").isNotEmpty();

      server.stop();
      server = ServerProcess.start("127.0.0.1", serverPort);

      long revisionBefore = before.revision();
      Awaitility.await("the provider listed at a revision of the new server")
          .atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
            InstancesChangeEvent now = Subscriber.cached(sub, service);
            return now.revision() > revisionBefore && lists(now, providerPort);
          });
      assertThat(lists(seen.get(seen.size() - 1), providerPort))
          .as("the listener was last told of a list with the provider").isTrue();
    }
  }

  private static boolean lists(InstancesChangeEvent e, int port) {
    return e.instances().stream().anyMatch(i -> i.port() == port);
  }
}
