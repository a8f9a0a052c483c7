package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/**
 * Found by {@link ChaosTest}: the leader frozen (SIGSTOP), then let go (SIGCONT) as soon as its
 * clients have sessions on other members. Its clients give up on it and register again through another member; the others elect a new
 * leader and record the old one down. When the old leader runs again it handles what its
 * clients sent before they left (their streams' end) at once, before its cluster watch has
 * noticed it lost the cluster, and proposes the removal of their sessions' instances. If that
 * reaches the log before the new registrations (the new leader's own proposals may wait for the
 * old leader, where its log client still sent them), every subscriber sees live instances go
 * and come back. No event may lack a live instance.
 */
class PausedLeaderTest {

  private static final String SERVICE = "paused-leader-svc";
  private final List<AutoCloseable> closing = new ArrayList<>();
  private LocalCluster cluster;

  @AfterEach
  void tearDown() throws Exception {
    for (int i = closing.size() - 1; i >= 0; i--) {
      try {
        closing.get(i).close();
      } catch (Exception ignored) {
        // Best effort.
      }
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  @Disabled("reason: a member's late session ends race the moved clients' registrations in the log. Run of "
      + "2026-12-02 06:42: leader 127.0.0.1 SIGSTOPped at ~26.5 s; its 6 clients (keepalive 1 s) opened sessions on "
      + "127.0.0.2 at 27.6-28.2 s and registered again there; SIGCONT at 28.28 s: it lost leadership (28.284) and at "
      + "28.30-28.31 logged 'Session closed ... reason=cancelled removed instances=1' for all 6 old sessions; their "
      + "RemoveOwner entries were applied before the new owners' Register (still queued behind the log client of "
      + "127.0.0.2, which had been waiting on the frozen leader), so subscribers on both other members went 6 -> 1 "
      + "instance at 28.3 s and back by ~29 s. ChaosTest found the same with default keepalives (2 of 40 gone "
      + "for ~0.5 s after a SIGSTOP of the leader)")
  void aFrozenLeaderRemovesNoLiveInstanceWhenItRunsAgain() throws Exception {
    cluster = LocalCluster.start();
    int[] leader = new int[1];
    await("a leader").atMost(Timing.seconds(20)).until(() -> (leader[0] = cluster.leader()) >= 0);
    int l = leader[0];
    Set<String> live = new TreeSet<>();
    for (int k = 0; k < 6; k++) {
      // Quick to give up on a silent server: they move while the others' log clients still wait for it.
      RosterClient c = RosterClient.builder().serverAddresses(cluster.servers(l)).clientId("on-leader-" + k)
          .keepAlive(Duration.ofSeconds(1), Duration.ofSeconds(1)).requestTimeout(Timing.seconds(10)).build();
      closing.add(c);
      c.registerInstance(SERVICE, Instance.of("10.0.6.1", 9000 + k));
      live.add("10.0.6.1:" + (9000 + k));
    }
    List<EventLog> subscribers = new ArrayList<>();
    for (int m = 0; m < LocalCluster.SIZE; m++) {
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
          for (int m = 0; m < LocalCluster.SIZE; m++) {
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
    closing.add(c);
    return c;
  }
}
