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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Found by {@link ChaosTest}: the leader frozen (SIGSTOP), then let go (SIGCONT) as soon as its
 * clients have sessions on other members. Its clients give up on it and register again through another member; the others elect a new
 * leader and record the old one down. When the old leader runs again it handles what its
 * clients sent before they left (their streams' end) at once, before its cluster watch has
 * noticed it lost the cluster, and proposes the removal of their sessions' instances. If that
 * reaches the log before the new registrations (the new leader's own proposals may wait for the
 * old leader, where its log client still sent them), every subscriber sees live instances go
 * and come back. No event may lack a live instance: a member that finds itself stalled holds the
 * ends of its sessions for a moment ({@code Proposer.HOLD_ENDS_AFTER_STALL}).
 */
class PausedLeaderTest {

  private static final String SERVICE = "paused-leader-svc";
  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private LocalCluster cluster;

  @Test
  void aFrozenLeaderRemovesNoLiveInstanceWhenItRunsAgain() throws Exception {
    cluster = local.start();
    int[] leader = new int[1];
    await("a leader").atMost(Timing.seconds(20)).until(() -> (leader[0] = cluster.leader()) >= 0);
    int l = leader[0];
    Set<String> live = new TreeSet<>();
    for (int k = 0; k < 6; k++) {
      // Quick to give up on a silent server: they move while the others' log clients still wait for it.
      RosterClient c = RosterClient.builder().serverAddresses(cluster.servers(l)).clientId("on-leader-" + k)
          .keepAlive(Duration.ofSeconds(1), Duration.ofSeconds(1)).requestTimeout(Timing.seconds(10)).build();
      local.closing(c);
      c.registerInstance(SERVICE, Instance.of("10.0.6.1", 9000 + k));
      live.add("10.0.6.1:" + (9000 + k));
    }
    List<EventLog> subscribers = new ArrayList<>();
    for (int m = 0; m < cluster.size(); m++) {
      if (m != l) {
        subscribers.add(EventLog.subscribe("subscriber on member " + m, client(cluster.servers(m), "sub-" + m), SERVICE));
      }
    }
    await().atMost(Timing.seconds(10)).until(() -> subscribers.stream().allMatch(s -> s.latest().equals(live)));
    subscribers.forEach(EventLog::arm);

    cluster.node(l).signal("STOP");
    // Let go as soon as its clients have sessions elsewhere: their registrations are then in flight.
    await("the frozen leader's clients on other members").atMost(Timing.seconds(30))
        .pollInterval(Duration.ofMillis(50)).until(() -> {
          Set<String> elsewhere = new TreeSet<>();
          for (int m = 0; m < cluster.size(); m++) {
            if (m != l) {
              elsewhere.addAll(cluster.clientIds(m));
            }
          }
          return elsewhere.stream().filter(id -> id.startsWith("on-leader-")).count() == 6;
        });
    cluster.node(l).signal("CONT");

    List<String> expected = List.copyOf(live);
    await("every member's view equals the live providers").atMost(Timing.seconds(30))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(cluster.views(SERVICE)).containsOnly(expected));
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
