package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.LocalCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Official nacos-client 2.5.1 clients through a rolling restart of a three-member cluster: each
 * stopping member sends its Nacos connections a ConnectResetRequest naming a live member, and
 * keeps the instances of a connection that then ends until the client's redo (break before
 * make) has registered them on its new member. No subscriber, Nacos or Roster, may see the
 * provider's instance go.
 */
class NacosClusterDrainTest {

  private static final String SERVICE = "nacos-drain";
  private static final String PROVIDER = "10.0.10.1:8080";

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private LocalCluster cluster;

  private NamingService nacosClient(int first) throws Exception {
    List<String> addresses = new ArrayList<>();
    for (int k = 0; k < cluster.size(); k++) {
      int m = (first + k) % cluster.size();
      addresses.add(cluster.hosts.get(m) + ":" + (cluster.ports.get(m) - 1000));
    }
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, String.join(",", addresses));
    NamingService n = NamingFactory.createNamingService(p);
    local.closing(n::shutDown);
    return n;
  }

  @Test
  void aRollingRestartMovesNacosClientsWithoutASubscriberSeeingTheirInstancesGo() throws Exception {
    Path cache = Files.createTempDirectory("nacos-drain-cache");
    System.setProperty("JM.SNAPSHOT.PATH", cache.toString());
    System.setProperty("JM.LOG.PATH", cache.resolve("logs").toString());
    cluster = local.start("--shutdown-grace", "10s");

    NamingService provider = nacosClient(0);
    Instance i = new Instance();
    i.setIp("10.0.10.1");
    i.setPort(8080);
    provider.registerInstance(SERVICE, i);
    // A Nacos consumer and a Roster SDK consumer on every member.
    List<List<String>> nacosEvents = new CopyOnWriteArrayList<>();
    nacosClient(1).subscribe(SERVICE, e -> nacosEvents.add(((NamingEvent) e).getInstances().stream()
        .map(x -> x.getIp() + ":" + x.getPort()).toList()));
    List<EventLog> subscribers = new ArrayList<>();
    for (int m = 0; m < cluster.size(); m++) {
      RosterClient c = RosterClient.builder().serverAddresses(cluster.servers(m)).clientId("sub-" + m)
          .requestTimeout(Timing.seconds(10)).build();
      local.closing(c);
      subscribers.add(EventLog.subscribe("subscriber on member " + m, c, SERVICE));
    }
    Set<String> live = Set.of(PROVIDER);
    await().atMost(Timing.seconds(30)).untilAsserted(() -> {
      assertThat(subscribers).allSatisfy(s -> assertThat(s.latest()).as(s.name).isEqualTo(live));
      assertThat(nacosEvents).isNotEmpty();
      assertThat(nacosEvents.get(nacosEvents.size() - 1)).containsExactly(PROVIDER);
    });
    subscribers.forEach(EventLog::arm);
    int nacosEventsBefore = nacosEvents.size();

    for (int m = 0; m < cluster.size(); m++) {
      long stopAt = System.nanoTime();
      cluster.node(m).stop();
      Duration stopping = Duration.ofNanos(System.nanoTime() - stopAt);
      Duration serving = cluster.restart(m);
      System.out.printf("nacos rolling restart: member %d SIGTERM to exit %d ms, start to SERVING %d ms%n", m,
          stopping.toMillis(), serving.toMillis());
    }

    // Every member holds the provider (moved by its redo), and nobody saw it go.
    await().atMost(Timing.seconds(30)).pollInterval(Duration.ofMillis(200))
        .untilAsserted(() -> assertThat(cluster.views(SERVICE)).containsOnly(List.of(PROVIDER)));
    List<String> flaps = new ArrayList<>();
    subscribers.forEach(s -> flaps.addAll(s.flaps(live)));
    assertThat(flaps).as(EventLog.describe(flaps)).isEmpty();
    assertThat(nacosEvents.subList(nacosEventsBefore, nacosEvents.size()))
        .as("the Nacos consumer's events during the restart").isEmpty();
    assertThat(provider.getServerStatus()).isEqualTo("UP");
  }
}
