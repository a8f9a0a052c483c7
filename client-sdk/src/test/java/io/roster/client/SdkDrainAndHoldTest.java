package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import io.roster.server.session.Session;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/operations.md "Graceful release" and "Server restarts", end to end: the SDK drains on
 * close by default; after a reconnect it holds back an empty state, does not ack it while it is
 * held (so a drain is not told it caught up), and lets a non-empty state replace it at once.
 */
class SdkDrainAndHoldTest {

  private final List<AutoCloseable> resources = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  private <T extends AutoCloseable> T track(T resource) {
    resources.add(resource);
    return resource;
  }

  private static List<String> lastIps(List<InstancesChangeEvent> events) {
    return events.isEmpty() ? List.of()
        : events.get(events.size() - 1).instances().stream().map(Instance::ip).sorted().toList();
  }

  @Test
  void closeDrainsByDefault() {
    RosterServer server = track(TestServers.start(0));
    RosterClient provider = TestServers.client(server).build(); // default drainTimeout: 3 s
    resources.add(provider);
    provider.registerInstance("hold.close", "10.2.0.1", 80);
    RosterClient consumer = track(TestServers.client(server).build());
    consumer.subscribe("hold.close", e -> { });
    await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("hold.close").size() == 1);

    provider.close();

    // Drained before the goodbye: the consumer's cache was already empty when close returned.
    assertThat(consumer.getAllInstances("hold.close")).isEmpty();
  }

  @Test
  void aHeldEmptyStateIsNotAckedAndANonEmptyOneReplacesItAtOnce() throws Exception {
    RosterServer server = track(TestServers.start(0));
    GrpcRelay relay = track(new GrpcRelay(server.port()));
    Duration hold = TestServers.scaled(Duration.ofSeconds(20));
    RosterClient provider = track(TestServers.client(server).drainTimeout(Duration.ZERO).build());
    provider.registerInstance("hold.held", "10.2.0.2", 80);
    RosterClient consumer = track(RosterClient.builder().serverAddresses(relay.address())
        .clientId("held-consumer").pollEnabled(false).reconnectEmptyHold(hold)
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(3))).drainTimeout(Duration.ZERO).build());
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    consumer.subscribe("hold.held", events::add);
    await().atMost(TestServers.patience()).until(() -> lastIps(events).equals(List.of("10.2.0.2")));

    relay.cutSessions(); // the consumer reconnects and subscribes again
    await().atMost(TestServers.patience()).until(() -> relay.sessions.get() == 2 && consumerSession(server) != null
        && consumerSession(server).subscriptionCount() == 1 && consumerSession(server).unackedPushes() == 0);

    DrainResult drained = provider.drain(TestServers.scaled(Duration.ofSeconds(1)));

    assertThat(drained).as("the held empty state is not acked").isEqualTo(new DrainResult(1, 0, 1, 0));
    assertThat(consumer.getAllInstances("hold.held")).extracting(Instance::ip).containsExactly("10.2.0.2");

    long registeredAt = System.nanoTime();
    RosterClient next = track(TestServers.client(server).drainTimeout(Duration.ZERO).build());
    next.registerInstance("hold.held", "10.2.0.3", 80);

    await().atMost(TestServers.patience()).until(() -> lastIps(events).equals(List.of("10.2.0.3")));
    assertThat(Duration.ofNanos(System.nanoTime() - registeredAt)).as("at once, not at the end of the hold")
        .isLessThan(hold.dividedBy(2));
    assertThat(events).noneMatch(e -> e.instances().isEmpty());
    await().atMost(TestServers.patience()).until(() -> consumerSession(server).unackedPushes() == 0);
  }

  private static Session consumerSession(RosterServer server) {
    return server.sessions().all().stream().filter(s -> s.info().clientId().equals("held-consumer"))
        .findFirst().orElse(null);
  }
}
