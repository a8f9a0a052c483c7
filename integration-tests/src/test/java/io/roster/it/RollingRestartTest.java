package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
 * A rolling restart under load. 100 SDK clients in four child JVMs (25 each,
 * spread over the members) each register one instance; a subscriber preferring each member
 * records every listener event. Each member in turn gets SIGTERM and is started again with its
 * data, the next one only once it is SERVING. No event may lack a live instance, and at the end
 * every member's registry holds exactly the 100.
 */
class RollingRestartTest {

  private static final String SERVICE = "rolling-svc";
  private static final int JVMS = 4;
  private static final int PER_JVM = 25;

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private LocalCluster cluster;

  @Test
  void restartingEveryMemberInTurnShowsNoSubscriberALiveInstanceGone() throws Exception {
    cluster = local.start("--shutdown-grace", "10s", "--member-grace", "5s");
    Set<String> live = new TreeSet<>();
    List<ClientsProcess> fleet = new ArrayList<>();
    for (int j = 0; j < JVMS; j++) {
      ClientsProcess p = new ClientsProcess(cluster.servers(0), SERVICE, PER_JVM, "10.0.4.1", 10_000 + 100 * j);
      local.closing(p);
      fleet.add(p);
      live.addAll(p.instances());
    }
    fleet.forEach(ClientsProcess::awaitRegistered);
    System.out.printf("rolling restart: %d clients registered after %d ms%n", live.size(),
        (System.nanoTime() - cluster.node(0).startedNanos) / 1_000_000);
    List<EventLog> subscribers = new ArrayList<>();
    for (int m = 0; m < cluster.size(); m++) {
      RosterClient c = RosterClient.builder().serverAddresses(cluster.servers(m)).clientId("sub-" + m)
          .requestTimeout(Timing.seconds(10)).build();
      local.closing(c);
      subscribers.add(EventLog.subscribe("subscriber on member " + m, c, SERVICE));
    }
    await("every subscriber shows the 100").atMost(Timing.seconds(30)).untilAsserted(() ->
        assertThat(subscribers).allSatisfy(s -> assertThat(s.latest()).as(s.name).isEqualTo(live)));
    subscribers.forEach(EventLog::arm);

    long t0 = System.nanoTime();
    for (int m = 0; m < cluster.size(); m++) {
      long stopAt = System.nanoTime();
      cluster.node(m).stop();
      Duration stopping = Duration.ofNanos(System.nanoTime() - stopAt);
      Duration serving = cluster.restart(m);
      System.out.printf("rolling restart: member %d SIGTERM to exit %d ms, start to SERVING %d ms%n", m,
          stopping.toMillis(), serving.toMillis());
    }
    System.out.printf("rolling restart: %d members in %d ms%n", cluster.size(), (System.nanoTime() - t0) / 1_000_000);

    List<String> expected = List.copyOf(live);
    await("every member's view equals the 100 live registrations").atMost(Timing.seconds(30))
        .pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(cluster.views(SERVICE)).containsOnly(expected));
    await().atMost(Timing.seconds(10)).untilAsserted(() ->
        assertThat(subscribers).allSatisfy(s -> assertThat(s.latest()).as(s.name).isEqualTo(live)));
    List<String> flaps = new ArrayList<>();
    subscribers.forEach(s -> flaps.addAll(s.flaps(live)));
    assertThat(flaps).as(EventLog.describe(flaps)).isEmpty();
    assertThat(fleet).allMatch(ClientsProcess::isAlive);
  }
}
