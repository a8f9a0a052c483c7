package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.server.model.ServiceKey;
import io.roster.server.session.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Delta pushes between the real server and the SDK over loopback: a subscriber of a large
 * service gets one change as a delta, applies it, and holds exactly the server's state; a
 * subscriber whose cache shows another list than the server's (push-empty protection) applies
 * the next delta to the server's state, not to its cache, and converges too. (A base the
 * client never had, and a result with another checksum, are ClientRequestTest's and
 * DeltaPushTest's.)
 */
class DeltaPushEndToEndTest extends SharedServerTest {

  private static List<Instance> instances(String prefix, int n) {
    List<Instance> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(Instance.builder().ip(prefix + (i / 250) + "." + (i % 250)).port(8080)
          .metadata(Map.of("zone", "zone-" + (i % 3))).build());
    }
    return list;
  }

  private static Session sessionOf(String clientId) {
    return server.sessions().all().stream().filter(s -> s.info().clientId().equals(clientId)).findFirst()
        .orElseThrow();
  }

  private static List<String> addresses(List<Instance> list) {
    return list.stream().map(i -> i.ip() + ":" + i.port()).sorted().toList();
  }

  private static List<String> serverAddresses(String service) {
    return server.registry().snapshot(ServiceKey.of("public", "DEFAULT_GROUP", service)).instances().stream()
        .map(i -> i.ip() + ":" + i.port()).sorted().toList();
  }

  @Test
  void aSubscriberOfALargeServiceAppliesOneChangeAsADeltaAndHoldsTheServersState() {
    RosterClient provider = newClient();
    provider.batchRegisterInstance("e2e.delta", instances("10.3.", 3000));
    RosterClient subscriber = track(TestServers.client(server).clientId("delta-subscriber").pollEnabled(false).build());
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    subscriber.subscribe("e2e.delta", events::add);
    await().atMost(TestServers.patience()).until(() -> !events.isEmpty() && events.get(events.size() - 1).instances().size() == 3000);
    await().atMost(TestServers.patience()).until(() -> sessionOf("delta-subscriber").unackedPushes() == 0);

    provider.registerInstance("e2e.delta", Instance.of("10.4.0.1", 9090));
    await().atMost(TestServers.patience()).untilAsserted(() -> {
      InstancesChangeEvent last = events.get(events.size() - 1);
      assertThat(last.instances()).hasSize(3001);
      assertThat(last.added()).extracting(Instance::ip).containsExactly("10.4.0.1");
      assertThat(last.removed()).isEmpty();
    });
    Session session = sessionOf("delta-subscriber");
    assertThat(session.sentDeltas()).isEqualTo(1);
    assertThat(session.deltaResyncs()).as("the checksum matched").isZero();
    assertThat(addresses(subscriber.getAllInstances("e2e.delta"))).isEqualTo(serverAddresses("e2e.delta"));
    await().atMost(TestServers.patience()).until(() -> session.unackedPushes() == 0);
  }

  @Test
  void aDeltaAppliesToTheServersStateWhenPushEmptyProtectionKeptAnotherList() {
    RosterClient provider = newClient();
    List<Instance> list = instances("10.5.", 100);
    provider.batchRegisterInstance("e2e.delta.resync", list);
    // Push-empty protection keeps the old list when the service empties: the cache then shows
    // a list that is not the server's, and does not ack that state.
    RosterClient subscriber = track(TestServers.client(server).clientId("resync-subscriber").pollEnabled(false)
        .pushEmptyProtection(true).build());
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    subscriber.subscribe("e2e.delta.resync", events::add);
    await().atMost(TestServers.patience()).until(() -> !events.isEmpty());
    await().atMost(TestServers.patience()).until(() -> sessionOf("resync-subscriber").unackedPushes() == 0);

    provider.batchRegisterInstance("e2e.delta.resync", List.of());
    await().atMost(TestServers.patience()).until(() -> events.get(events.size() - 1).emptyPushIgnored());
    // Back, plus one: against the last acked state (the 100) that is a delta of one instance.
    List<Instance> more = new ArrayList<>(list);
    more.add(Instance.of("10.6.0.1", 9090));
    provider.batchRegisterInstance("e2e.delta.resync", more);

    await().atMost(TestServers.patience()).untilAsserted(() -> {
      InstancesChangeEvent last = events.get(events.size() - 1);
      assertThat(last.emptyPushIgnored()).isFalse();
      assertThat(last.instances()).hasSize(101);
    });
    Session session = sessionOf("resync-subscriber");
    assertThat(session.sentDeltas()).isGreaterThanOrEqualTo(1);
    assertThat(session.deltaResyncs()).isZero();
    assertThat(addresses(subscriber.getAllInstances("e2e.delta.resync"))).isEqualTo(serverAddresses("e2e.delta.resync"));
  }
}
