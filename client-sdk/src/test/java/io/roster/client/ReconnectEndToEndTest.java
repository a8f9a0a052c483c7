package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Recovery: the server is closed (it sends {@code reconnect}) and started again on the same
 * port; the clients reconnect by themselves and redo what they registered and subscribed to.
 */
class ReconnectEndToEndTest {

  private final List<AutoCloseable> resources = new ArrayList<>();
  private RosterServer server;

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    if (server != null) {
      server.close();
    }
  }

  private RosterClient newClient(RosterClient.Builder builder) {
    RosterClient c = builder.build();
    resources.add(c);
    return c;
  }

  private static List<String> ips(List<Instance> instances) {
    List<String> result = new ArrayList<>();
    instances.forEach(i -> result.add(i.ip()));
    return result;
  }

  @Test
  void afterARestartOnTheSamePortRegistrationsAndSubscriptionsAreRedone() {
    server = TestServers.start(0);
    int port = server.port();
    RosterClient provider = newClient(TestServers.client(server));
    // Push only: proves the subscription itself was redone, not the poll fallback.
    RosterClient consumer = newClient(TestServers.client(server).pollEnabled(false));
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();

    provider.registerInstance("e2e.restart", "10.0.9.1", 80);
    consumer.subscribe("e2e.restart", events::add);
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastIps(events)).containsExactly("10.0.9.1"));

    server.close();
    server = TestServers.start(port);

    // A client that never saw the old server finds the provider: its registration was redone.
    RosterClient fresh = newClient(TestServers.client(server));
    await().atMost(TestServers.patience()).untilAsserted(
        () -> assertThat(ips(fresh.getAllInstances("e2e.restart"))).containsExactly("10.0.9.1"));

    // The consumer's subscription was redone: a change made after the restart is pushed to it.
    provider.registerInstance("e2e.restart", "10.0.9.2", 80);
    await().atMost(TestServers.patience()).untilAsserted(() -> assertThat(lastIps(events))
        .containsExactlyInAnyOrder("10.0.9.1", "10.0.9.2"));
    assertThat(ips(consumer.getAllInstances("e2e.restart")))
        .containsExactlyInAnyOrder("10.0.9.1", "10.0.9.2");
  }

  /**
   * The provider comes back later than the consumer, so the restarted server first tells the
   * consumer the service is empty. With the hold the consumer never shows that; without it, it
   * does.
   *
   * <p>Timing, scaled by the time factor: a server's reconnect frame makes its only client wait
   * at least the initial back-off, so the provider is back no sooner than 3 s after the
   * restart, while the consumers retry from 100 ms on and are back well before. The held
   * consumer's hold outlasts the provider's return by the patience (the 4 s default, pinned by
   * BackoffTest, leaves a loaded machine too little room here).
   */
  @Test
  void aConsumerBackBeforeItsProviderDoesNotSeeItVanishUnlessTheHoldIsOff() {
    server = TestServers.start(0);
    int port = server.port();
    Duration providerBack = TestServers.scaled(Duration.ofSeconds(3));
    RosterClient provider = newClient(TestServers.client(server).drainTimeout(Duration.ZERO)
        .reconnectBackoff(providerBack, providerBack));
    RosterClient held = newClient(TestServers.client(server).pollEnabled(false)
        .reconnectEmptyHold(providerBack.plus(TestServers.patience())));
    RosterClient unheld = newClient(TestServers.client(server).pollEnabled(false)
        .reconnectEmptyHold(Duration.ZERO));
    List<InstancesChangeEvent> heldEvents = new CopyOnWriteArrayList<>();
    List<InstancesChangeEvent> unheldEvents = new CopyOnWriteArrayList<>();
    provider.registerInstance("e2e.hold", "10.0.8.1", 80);
    held.subscribe("e2e.hold", heldEvents::add);
    unheld.subscribe("e2e.hold", unheldEvents::add);
    await().atMost(TestServers.patience()).until(
        () -> lastIps(heldEvents).size() == 1 && lastIps(unheldEvents).size() == 1);

    server.close();
    server = TestServers.start(port);

    // Both consumers end with the provider back...
    await().atMost(providerBack.plus(TestServers.patience())).until(() -> ips(held.getAllInstances("e2e.hold")).equals(List.of("10.0.8.1"))
        && lastIps(unheldEvents).equals(List.of("10.0.8.1")) && unheldEvents.size() >= 3);
    // ...but only the one without the hold was told it had vanished in between.
    assertThat(unheldEvents).anyMatch(e -> e.instances().isEmpty());
    assertThat(heldEvents).noneMatch(e -> e.instances().isEmpty());
  }

  private static List<String> lastIps(List<InstancesChangeEvent> events) {
    return events.isEmpty() ? List.of() : ips(events.get(events.size() - 1).instances());
  }
}
