package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Drain through the public API against an in-JVM server on a loopback socket. */
class DrainEndToEndTest extends SharedServerTest {

  private RosterClient newClient(Duration drainOnClose) {
    return track(TestServers.client(server).drainTimeout(drainOnClose).build());
  }

  private RosterClient consumerOf(String service, int expected) {
    RosterClient c = newClient(Duration.ZERO);
    c.subscribe(service, e -> { });
    await().atMost(TestServers.patience()).until(() -> c.getAllInstances(service).size() == expected);
    return c;
  }

  @Test
  void whenDrainReturnsEveryConsumerCacheIsAlreadyWithoutTheInstance() {
    RosterClient provider = newClient(Duration.ZERO);
    provider.registerInstance("drain-demo", "10.0.0.1", 8080);
    List<RosterClient> consumers = List.of(consumerOf("drain-demo", 1), consumerOf("drain-demo", 1));

    DrainResult result = provider.drain(TestServers.scaled(Duration.ofSeconds(10)));

    assertThat(result).isEqualTo(new DrainResult(2, 2, 0, 0));
    assertThat(result.complete()).isTrue();
    for (RosterClient c : consumers) {
      // No waiting: the ack was sent only after the push was applied to the cache.
      assertThat(c.getAllInstances("drain-demo")).isEmpty();
    }
  }

  @Test
  void closeDrainsFirst() {
    RosterClient provider = newClient(TestServers.scaled(Duration.ofSeconds(5)));
    provider.registerInstance("drain-close", "10.0.0.2", 8080);
    RosterClient consumer = consumerOf("drain-close", 1);

    provider.close();

    // The drain completed before close() returned: the consumer's cache already shows it.
    assertThat(consumer.getAllInstances("drain-close")).isEmpty();
  }

  /**
   * A provider drains, stays open, and then reconnects: its server restarts on the same port
   * (a server of its own, not the shared one). The client redoes its desired state on the new
   * server, and the drained instances are no longer part of it: the new session is there with
   * its subscription redone (the redo happened; registrations are sent before subscriptions),
   * yet it owns no instance and nobody sees the drained ones.
   */
  @Test
  void aRedoAfterADrainDoesNotBringTheInstancesBack() {
    RosterServer own = TestServers.start(0);
    int port = own.port();
    try {
      RosterClient provider = track(TestServers.client(own).clientId("drain-redo-provider")
          .drainTimeout(Duration.ZERO).build());
      provider.batchRegisterInstance("drain-redo", List.of(Instance.of("10.0.0.4", 80), Instance.of("10.0.0.5", 80)));
      provider.subscribe("drain-redo-other", e -> { });
      RosterClient consumer = track(TestServers.client(own).drainTimeout(Duration.ZERO).build());
      consumer.subscribe("drain-redo", e -> { });
      await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("drain-redo").size() == 2);

      assertThat(provider.drain(TestServers.scaled(Duration.ofSeconds(10)))).isEqualTo(new DrainResult(1, 1, 0, 0));

      own.close();
      own = TestServers.start(port);
      RosterServer restarted = own;
      await().atMost(TestServers.patience()).untilAsserted(() ->
          assertThat(TestServers.connectionsOnServer(restarted, "drain-redo-provider"))
              .as("the provider's session on the new server, subscription redone")
              .singleElement().satisfies(c -> assertThat(c.getSubscriptionCount()).isEqualTo(1)));
      assertThat(TestServers.connectionsOnServer(restarted, "drain-redo-provider").get(0).getInstanceCount())
          .as("instances the redone session owns").isZero();
      try (RosterClient fresh = TestServers.client(restarted).drainTimeout(Duration.ZERO).build()) {
        assertThat(fresh.getAllInstances("drain-redo")).isEmpty();
      }
    } finally {
      clients.forEach(RosterClient::close);
      clients.clear();
      own.close();
    }
  }

  @Test
  void aBadTimeoutNamesTheArgumentAndKeepsTheRegistrations() {
    RosterClient provider = newClient(Duration.ZERO);
    provider.registerInstance("drain-bad", "10.0.0.3", 8080);
    RosterClient consumer = consumerOf("drain-bad", 1);

    assertThatThrownBy(() -> provider.drain(Duration.ofMinutes(5)))
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(RosterException.Code.INVALID_ARGUMENT);
          assertThat(e.getMessage()).isEqualTo("timeout: PT5M (expected: 0 .. PT1M)");
        });
    assertThat(consumer.getAllInstances("drain-bad")).hasSize(1);
  }

  @Test
  void aConsumerProtectedFromEmptyListsDoesNotCountAsCaughtUp() {
    RosterClient provider = newClient(Duration.ZERO);
    provider.registerInstance("drain-protected", "10.0.0.9", 80);
    RosterClient consumer = TestServers.client(server).drainTimeout(Duration.ZERO).pushEmptyProtection(true).build();
    clients.add(consumer);
    consumer.subscribe("drain-protected", e -> { });
    await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("drain-protected").size() == 1);

    DrainResult r = provider.drain(Duration.ofSeconds(1));

    // It still routes to the drained instance, so the drain must not report it as acked.
    assertThat(consumer.getAllInstances("drain-protected")).hasSize(1);
    assertThat(r).isEqualTo(new DrainResult(1, 0, 1, 0));
  }
}
