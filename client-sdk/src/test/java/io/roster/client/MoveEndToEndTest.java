package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Change;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Make-before-break over real sockets: server A asks its client to move to server B (a {@code
 * reconnect} frame naming B, as a cluster member that stops or sheds clients does). A and B do
 * not share a registry (no cluster here), so the test watches both registries: B must have the
 * client's instance before A sees the goodbye that removes it there, and the client's own
 * listener must never see it go.
 */
class MoveEndToEndTest {

  private static final String SERVICE = "e2e.move";
  private static final ServiceKey KEY = new ServiceKey("public", "DEFAULT_GROUP", SERVICE);

  @Test
  void aClientAskedToMoveHasItsInstanceOnTheNewServerBeforeTheOldOneSeesItsGoodbye() {
    RosterServer a = TestServers.start(0);
    RosterServer b = TestServers.start(0);
    // What each registry showed of the other at the moment of its own change.
    List<String> seen = new CopyOnWriteArrayList<>();
    b.registry().addListener(c -> {
      if (c.service().equals(KEY) && c.kind() == Change.Kind.REGISTERED) {
        seen.add("B registered; A has " + a.registry().snapshot(KEY).instances().size());
      }
    });
    a.registry().addListener(c -> {
      if (c.service().equals(KEY) && c.kind() == Change.Kind.REMOVED) {
        seen.add("A removed; B has " + b.registry().snapshot(KEY).instances().size());
      }
    });
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    try (RosterClient client = RosterClient.builder()
        .serverAddresses("127.0.0.1:" + a.port())
        .clientId("e2e-mover")
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(3)))
        .drainTimeout(Duration.ZERO)
        .pollEnabled(false)
        .build()) {
      client.registerInstance(SERVICE, "10.0.7.1", 80);
      client.subscribe(SERVICE, events::add);
      await().atMost(TestServers.patience()).until(() -> !events.isEmpty());

      String connectionId = TestServers.connectionsOnServer(a, "e2e-mover").get(0).getConnectionId();
      assertThat(a.askToMove(connectionId, "127.0.0.1:" + b.port(), "rebalance")).isTrue();

      await().atMost(TestServers.patience()).untilAsserted(() -> {
        assertThat(TestServers.connectionsOnServer(a, "e2e-mover")).as("gone from A").isEmpty();
        assertThat(TestServers.connectionsOnServer(b, "e2e-mover")).as("on B").hasSize(1);
        assertThat(seen).hasSize(2);
      });
      assertThat(seen).containsExactly("B registered; A has 1", "A removed; B has 1");
      assertThat(b.registry().snapshot(KEY).instances()).extracting(i -> i.ip()).containsExactly("10.0.7.1");
      assertThat(a.registry().snapshot(KEY).instances()).isEmpty();

      // Requests now go to B.
      client.registerInstance(SERVICE, "10.0.7.2", 80);
      assertThat(b.registry().snapshot(KEY).instances()).hasSize(2);
      assertThat(a.registry().snapshot(KEY).instances()).isEmpty();
      await().atMost(TestServers.patience()).until(() -> events.get(events.size() - 1).instances().size() == 2);
      assertThat(events).as("the listener never saw the instance go")
          .allSatisfy(e -> assertThat(e.removed()).isEmpty())
          .allSatisfy(e -> assertThat(e.instances()).extracting(Instance::ip).contains("10.0.7.1"));
    } finally {
      a.close();
      b.close();
    }
  }
}
