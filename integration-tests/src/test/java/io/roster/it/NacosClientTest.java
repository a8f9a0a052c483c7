package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The official {@code nacos-client} 2.5.1 {@link NamingService} against a real Roster server
 * process, on Roster's own gRPC port (docs/nacos-compat.md): the client is given {@code
 * serverAddr = 127.0.0.1:<port - 1000>} and connects, as it always does, to that port + 1000.
 */
class NacosClientTest {

  private static ServerProcess server;
  private static Path cacheDir;
  private final List<NamingService> clients = new ArrayList<>();

  @BeforeAll
  static void startServer() throws Exception {
    cacheDir = Files.createTempDirectory("nacos-client-cache");
    // The client's disk cache and logs, away from ~/nacos.
    System.setProperty("JM.SNAPSHOT.PATH", cacheDir.toString());
    System.setProperty("JM.LOG.PATH", cacheDir.resolve("logs").toString());
    int port = Ports.freeForNacos();
    server = ServerProcess.start("127.0.0.1", port);
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @AfterEach
  void shutDownClients() throws NacosException {
    for (NamingService c : clients) {
      c.shutDown();
    }
  }

  private NamingService nacos() throws NacosException {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + (server.port - 1000));
    NamingService c = NamingFactory.createNamingService(p);
    clients.add(c);
    return c;
  }

  private static Instance instance(String ip, int port, Map<String, String> metadata) {
    Instance i = new Instance();
    i.setIp(ip);
    i.setPort(port);
    i.setWeight(2.5);
    i.setClusterName("c1");
    i.setMetadata(metadata);
    return i;
  }

  /** A listener's latest instance list of one service. */
  private static final class Latest {
    final AtomicReference<List<Instance>> hosts = new AtomicReference<>();
    final List<List<Instance>> events = new CopyOnWriteArrayList<>();

    void on(com.alibaba.nacos.api.naming.listener.Event e) {
      if (e instanceof NamingEvent ne) {
        hosts.set(ne.getInstances());
        events.add(ne.getInstances());
      }
    }

    List<String> addresses() {
      List<Instance> h = hosts.get();
      return h == null ? null : h.stream().map(i -> i.getIp() + ":" + i.getPort()).sorted().toList();
    }
  }

  private static Duration bound() {
    return Timing.seconds(15);
  }

  /** registerInstance, then getAllInstances (a query, not a subscription) sees it, fields intact. */
  @Test
  void registerThenGetAllInstancesSeesIt() throws Exception {
    NamingService provider = nacos();
    provider.registerInstance("orders", "shop", instance("10.0.0.1", 8080, Map.of("zone", "a")));

    NamingService consumer = nacos();
    List<Instance> all = consumer.getAllInstances("orders", "shop", false);
    assertThat(all).hasSize(1);
    Instance i = all.get(0);
    assertThat(i.getIp()).isEqualTo("10.0.0.1");
    assertThat(i.getPort()).isEqualTo(8080);
    assertThat(i.getWeight()).isEqualTo(2.5);
    assertThat(i.getClusterName()).isEqualTo("c1");
    assertThat(i.isHealthy()).isTrue();
    assertThat(i.isEnabled()).isTrue();
    assertThat(i.isEphemeral()).isTrue();
    assertThat(i.getMetadata()).containsEntry("zone", "a");
    assertThat(i.getInstanceId()).isEqualTo("10.0.0.1#8080#c1#shop@@orders");
    assertThat(i.getServiceName()).isEqualTo("shop@@orders");
    // Another namespace is another registry space.
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + (server.port - 1000));
    p.setProperty(PropertyKeyConst.NAMESPACE, "dev");
    NamingService dev = NamingFactory.createNamingService(p);
    clients.add(dev);
    assertThat(dev.getAllInstances("orders", "shop", false)).isEmpty();
  }

  /**
   * subscribe: the first event carries the current list, a second instance registering is
   * pushed, and its deregisterInstance is pushed as its removal.
   */
  @Test
  void subscriberIsPushedRegistrationsAndDeregistrations() throws Exception {
    NamingService first = nacos();
    first.registerInstance("payments", instance("10.0.1.1", 9000, Map.of()));
    NamingService consumer = nacos();
    Latest latest = new Latest();
    consumer.subscribe("payments", latest::on);
    await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.1.1:9000"));

    NamingService second = nacos();
    second.registerInstance("payments", instance("10.0.1.2", 9000, Map.of()));
    await().atMost(bound()).untilAsserted(() ->
        assertThat(latest.addresses()).containsExactly("10.0.1.1:9000", "10.0.1.2:9000"));

    second.deregisterInstance("payments", "10.0.1.2", 9000, "c1");
    await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.1.1:9000"));
    assertThat(second.getAllInstances("payments", false)).extracting(Instance::getIp).containsExactly("10.0.1.1");
  }

  /** shutDown() of a provider's NamingService ends its connection: a subscriber sees its instance gone. */
  @Test
  void providerShutDownRemovesItsInstance() throws Exception {
    NamingService consumer = nacos();
    Latest latest = new Latest();
    consumer.subscribe("inventory", latest::on);

    NamingService provider = nacos();
    provider.registerInstance("inventory", instance("10.0.2.1", 7000, Map.of()));
    NamingService stays = nacos();
    stays.registerInstance("inventory", instance("10.0.2.2", 7000, Map.of()));
    await().atMost(bound()).untilAsserted(() ->
        assertThat(latest.addresses()).containsExactly("10.0.2.1:7000", "10.0.2.2:7000"));

    clients.remove(provider);
    provider.shutDown();
    await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.2.2:7000"));
  }

  /**
   * {@code ephemeral=false}: the client sends {@code PersistentInstanceRequest} (the server says it
   * supports them over gRPC). The instance is the registry's, not the connection's: it stays when
   * the client that registered it shuts down, and another client deregisters it. An ephemeral
   * instance may not join its service.
   */
  @Test
  void aPersistentInstanceOutlivesItsClientUntilDeregistered() throws Exception {
    NamingService consumer = nacos();
    Latest latest = new Latest();
    consumer.subscribe("ledger-db", latest::on);
    NamingService provider = nacos();
    Instance db = instance("10.0.9.1", 5432, Map.of("role", "primary"));
    db.setEphemeral(false);
    provider.registerInstance("ledger-db", db);
    await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.9.1:5432"));
    assertThat(consumer.getAllInstances("ledger-db", false)).singleElement()
        .satisfies(i -> assertThat(i.isEphemeral()).isFalse());
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> provider.registerInstance("ledger-db",
        instance("10.0.9.2", 5432, Map.of()))).isInstanceOf(NacosException.class)
        .hasMessageContaining("either ephemeral or persistent");

    clients.remove(provider);
    provider.shutDown();
    NamingService operator = nacos();
    // Still there once the provider's connection is gone (a fresh client's query sees it).
    await().atMost(bound()).untilAsserted(() -> assertThat(operator.getAllInstances("ledger-db", false)).hasSize(1));
    operator.deregisterInstance("ledger-db", db);
    await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).isEmpty());
  }

  /** kill -9 of a nacos-client provider process: the OS closes its socket, subscribers see it gone. */
  @Test
  void killedProviderProcessIsRemoved() throws Exception {
    NamingService consumer = nacos();
    Latest latest = new Latest();
    consumer.subscribe("billing", latest::on);
    try (NacosProviderMain.Provider provider = new NacosProviderMain.Provider("127.0.0.1:" + (server.port - 1000),
        "billing", "10.0.6.1", 5000, cacheDir.toString())) {
      provider.awaitRegistered();
      await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.6.1:5000"));

      provider.kill9();

      await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).isEmpty());
    }
  }

  /** batchRegisterInstance sets the connection's instances of a service; batchDeregisterInstance removes some. */
  @Test
  void batchRegisterAndDeregister() throws Exception {
    NamingService provider = nacos();
    Instance a = instance("10.0.5.1", 6000, Map.of());
    Instance b = instance("10.0.5.2", 6000, Map.of());
    provider.batchRegisterInstance("shipping", "DEFAULT_GROUP", List.of(a, b));
    NamingService consumer = nacos();
    assertThat(consumer.getAllInstances("shipping", false)).extracting(Instance::getIp)
        .containsExactlyInAnyOrder("10.0.5.1", "10.0.5.2");
    assertThat(consumer.selectOneHealthyInstance("shipping", List.of("c1"), false).getIp()).startsWith("10.0.5.");

    provider.batchDeregisterInstance("shipping", "DEFAULT_GROUP", List.of(b));
    Latest latest = new Latest();
    consumer.subscribe("shipping", latest::on);
    await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.5.1:6000"));
  }

  /** A Roster SDK consumer sees a Nacos-registered provider, and a Nacos consumer an SDK-registered one. */
  @Test
  void rosterSdkAndNacosClientsShareOneRegistry() throws Exception {
    try (RosterClient sdk = RosterClient.builder().serverAddresses(server.address()).clientName("sdk").build()) {
      NamingService nacos = nacos();
      nacos.registerInstance("catalog", "shop", instance("10.0.3.1", 8000, Map.of("from", "nacos")));

      AtomicReference<InstancesChangeEvent> sdkSeen = new AtomicReference<>();
      sdk.subscribe("catalog", "shop", sdkSeen::set);
      await().atMost(bound()).untilAsserted(() -> {
        assertThat(sdkSeen.get()).isNotNull();
        assertThat(sdkSeen.get().instances()).singleElement().satisfies(i -> {
          assertThat(i.ip()).isEqualTo("10.0.3.1");
          assertThat(i.port()).isEqualTo(8000);
          assertThat(i.cluster()).isEqualTo("c1");
          assertThat(i.weight()).isEqualTo(2.5);
          assertThat(i.metadata()).containsEntry("from", "nacos");
        });
      });

      Latest latest = new Latest();
      nacos.subscribe("search", "shop", latest::on);
      sdk.registerInstance("search", "shop", io.roster.client.Instance.builder().ip("10.0.3.2").port(8100)
          .metadata(Map.of("from", "sdk")).build());
      await().atMost(bound()).untilAsserted(() -> {
        assertThat(latest.addresses()).containsExactly("10.0.3.2:8100");
        assertThat(latest.hosts.get().get(0).getMetadata()).containsEntry("from", "sdk");
        assertThat(latest.hosts.get().get(0).getClusterName()).isEqualTo("DEFAULT");
      });
    }
  }

  /**
   * A bad value is refused with a message naming the field, the value and the limit, and
   * nothing is registered.
   */
  @Test
  void badInputIsRefusedNamingTheField() throws Exception {
    NamingService c = nacos();
    Instance bad = instance("10.0.4.1", 8000, Map.of("big", "x".repeat(2000)));
    assertThatThrownBy(() -> c.registerInstance("bad-metadata", bad))
        .isInstanceOf(NacosException.class)
        .hasMessageContaining("instance.metadata[big]")
        .hasMessageContaining("2000 characters")
        .hasMessageContaining("at most 1024");
    // The 2.5.1 client marks its connection UNHEALTHY after any failed request and checks it
    // with a HealthCheckRequest before it takes requests again (its behaviour with Nacos too).
    await().atMost(bound()).ignoreExceptions().untilAsserted(() ->
        assertThat(c.getAllInstances("bad-metadata", false)).isEmpty());
  }

  /**
   * getServicesOfServer: the group's service names, sorted and paged, with the group's total as
   * the count (Spring Cloud Alibaba's getServices() asks for page 1 of Integer.MAX_VALUE).
   */
  @Test
  void getServicesOfServerPagesTheGroupsServices() throws Exception {
    NamingService provider = nacos();
    provider.batchRegisterInstance("list-b", "listing", List.of(instance("10.0.7.1", 1, Map.of())));
    NamingService other = nacos();
    other.registerInstance("list-a", "listing", instance("10.0.7.2", 1, Map.of()));
    NamingService third = nacos();
    third.registerInstance("list-c", "listing", instance("10.0.7.3", 1, Map.of()));

    NamingService consumer = nacos();
    var first = consumer.getServicesOfServer(1, 2, "listing");
    assertThat(first.getCount()).isEqualTo(3);
    assertThat(first.getData()).containsExactly("list-a", "list-b");
    assertThat(consumer.getServicesOfServer(2, 2, "listing").getData()).containsExactly("list-c");
    assertThat(consumer.getServicesOfServer(1, Integer.MAX_VALUE, "listing").getData())
        .containsExactly("list-a", "list-b", "list-c");
    assertThatThrownBy(() -> consumer.getServicesOfServer(0, 10, "listing"))
        .isInstanceOf(NacosException.class).hasMessageContaining("pageNo: 0 (expected: a page number from 1)");
  }

  /**
   * A provider process frozen with SIGSTOP (its TCP connection open, nothing coming from it):
   * the server's ClientDetectionRequest goes unanswered and the connection is ended within
   * --keepalive-time + --keepalive-timeout (4 s + 5 s by default); its subscribers are pushed.
   */
  @Test
  void frozenProviderProcessIsRemovedWithinTheKeepaliveBound() throws Exception {
    NamingService consumer = nacos();
    Latest latest = new Latest();
    consumer.subscribe("frozen", latest::on);
    try (NacosProviderMain.Provider provider = new NacosProviderMain.Provider("127.0.0.1:" + (server.port - 1000),
        "frozen", "10.0.8.1", 5000, cacheDir.toString())) {
      provider.awaitRegistered();
      await().atMost(bound()).untilAsserted(() -> assertThat(latest.addresses()).containsExactly("10.0.8.1:5000"));

      long frozenAt = System.nanoTime();
      provider.signal("STOP");
      try {
        await().atMost(Timing.seconds(10)).pollInterval(Duration.ofMillis(20))
            .untilAsserted(() -> assertThat(latest.addresses()).isEmpty());
        System.out.printf("nacos provider frozen (SIGSTOP) -> removal seen by a subscriber: %d ms%n",
            (System.nanoTime() - frozenAt) / 1_000_000);
      } finally {
        provider.signal("CONT");
      }
    }
  }
}
