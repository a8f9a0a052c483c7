package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Partitions between real members. Every peer link goes through proxies that can
 * freeze it ({@link LocalClusterExtension#startWithLinks}); clients reach the members directly. Six
 * providers (two preferring each member) stay alive throughout, so every listener event at every
 * subscriber must hold all six, and once the links heal every member's registry must hold
 * exactly them.
 */
class ClusterPartitionTest {

  private static final String SERVICE = "partition-svc";
  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private final Set<String> live = new TreeSet<>();
  private final List<EventLog> subscribers = new ArrayList<>();
  private LocalCluster cluster;

  /**
   * The link between members 0 and 1 frozen for 30 s (each still reaches member 2), then
   * healed: whichever of them lost the leader stops taking writes and moves its clients, the
   * leader records it down and ends what did not move; nothing that lived may vanish.
   */
  @Test
  void aLinkFrozenForThirtySecondsRemovesNoLiveInstance() {
    startWithProviders();
    EventLog third = subscribers.get(2);

    cluster.freeze(0, 1);
    try {
      await("30 s of a frozen link 0-1 without a flap at member 2's subscriber")
          .during(Timing.seconds(30)).atMost(Timing.seconds(32)).pollInterval(Duration.ofMillis(200))
          .until(() -> third.flaps(live).isEmpty());
    } catch (ConditionTimeoutException flapped) {
      assertNoFlaps(); // says which
    }
    cluster.heal();

    awaitAgreement(Timing.seconds(30));
    assertNoFlaps();
  }

  /**
   * Member 0 cut off from both others while its clients still reach it: it stops taking writes
   * and asks its sessions to move; they do (seen in the majority's ListConnections), no
   * subscriber sees a provider go, and once healed member 0 rejoins with the same registry.
   */
  @Test
  void anIsolatedMembersClientsMoveToTheMajorityAndItRejoins() {
    startWithProviders();
    Set<String> onZero = Set.of("p-0-0", "p-0-1", "sub-0");
    assertThat(cluster.clientIds(0)).as("member 0's clients before the cut").containsAll(onZero);

    cluster.isolate(0);
    await("member 0's clients on the majority").atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> {
          Set<String> majority = new TreeSet<>(cluster.clientIds(1));
          majority.addAll(cluster.clientIds(2));
          assertThat(majority).containsAll(onZero);
        });
    // Past member-down-after + member-grace: the leader has ended whatever member 0 still held.
    await("the majority's views through the grace").during(Timing.seconds(8)).atMost(Timing.seconds(10))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> List.copyOf(live).equals(cluster.view(1, SERVICE)) && List.copyOf(live).equals(cluster.view(2, SERVICE)));
    cluster.heal();

    cluster.node(0).awaitServing(Timing.seconds(30));
    awaitAgreement(Timing.seconds(30));
    assertNoFlaps();
  }

  private void startWithProviders() {
    cluster = local.startWithLinks("--member-grace", "5s");
    for (int m = 0; m < cluster.size(); m++) {
      for (int k = 0; k < 2; k++) {
        int port = 9000 + 10 * m + k;
        client(cluster.servers(m), "p-" + m + "-" + k).registerInstance(SERVICE, Instance.of("10.0.2.1", port));
        live.add("10.0.2.1:" + port);
      }
    }
    for (int m = 0; m < cluster.size(); m++) {
      subscribers.add(EventLog.subscribe("subscriber on member " + m, client(cluster.servers(m), "sub-" + m), SERVICE));
    }
    await().atMost(Timing.seconds(10)).until(() -> subscribers.stream().allMatch(s -> s.latest().equals(live)));
    subscribers.forEach(EventLog::arm);
  }

  private void awaitAgreement(Duration atMost) {
    List<String> expected = List.copyOf(live);
    await("every member's view equals the live providers " + expected).atMost(atMost)
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(cluster.views(SERVICE)).containsOnly(expected));
    await().atMost(atMost).until(() -> subscribers.stream().allMatch(s -> s.latest().equals(live)));
  }

  private void assertNoFlaps() {
    List<String> flaps = new ArrayList<>();
    subscribers.forEach(s -> flaps.addAll(s.flaps(live)));
    assertThat(flaps).as(EventLog.describe(flaps)).isEmpty();
  }

  private RosterClient client(String servers, String id) {
    RosterClient c = RosterClient.builder().serverAddresses(servers).randomStart(false).clientId(id).clientName(id)
        .requestTimeout(Timing.seconds(10)).build();
    local.closing(c);
    return c;
  }
}
