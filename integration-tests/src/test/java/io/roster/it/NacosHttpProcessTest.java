package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingMaintainFactory;
import com.alibaba.nacos.api.naming.NamingMaintainService;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
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
 * The Nacos v1 HTTP port of a real server process, where Nacos applications expect it (the
 * gRPC port − 1000): the official nacos-client 2.5.1's {@link NamingMaintainService} (HTTP),
 * and the curl flows of docs/nacos-compat.md, with Nacos and Roster SDK consumers watching.
 */
class NacosHttpProcessTest {

  private static ServerProcess server;
  private static int httpPort;
  private static Path cacheDir;
  private final List<NamingService> clients = new ArrayList<>();
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(bound()).build();

  @BeforeAll
  static void startServer() throws Exception {
    cacheDir = Files.createTempDirectory("nacos-http-cache");
    System.setProperty("JM.SNAPSHOT.PATH", cacheDir.toString());
    System.setProperty("JM.LOG.PATH", cacheDir.resolve("logs").toString());
    int port;
    do {
      port = Ports.free();
    } while (port <= 1000 || !free(port - 1000));
    httpPort = port - 1000;
    server = ServerProcess.start("127.0.0.1", port, "--http-port", "auto");
  }

  private static boolean free(int port) {
    try (java.net.ServerSocket s = new java.net.ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
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

  private static Duration bound() {
    return Timing.seconds(15);
  }

  private static Properties properties() {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + httpPort);
    return p;
  }

  private NamingService nacos() throws NacosException {
    NamingService c = NamingFactory.createNamingService(properties());
    clients.add(c);
    return c;
  }

  private record Answer(int status, String body) {}

  private Answer curl(String method, String pathAndQuery) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + pathAndQuery))
        .timeout(bound()).method(method, BodyPublishers.noBody()).build();
    var response = http.send(r, BodyHandlers.ofString());
    return new Answer(response.statusCode(), response.body());
  }

  /** A Nacos listener's latest instance list. */
  private static final class Latest {
    final AtomicReference<List<Instance>> hosts = new AtomicReference<>();

    void on(com.alibaba.nacos.api.naming.listener.Event e) {
      if (e instanceof NamingEvent ne) {
        hosts.set(ne.getInstances());
      }
    }

    List<String> addresses() {
      List<Instance> h = hosts.get();
      return h == null ? null : h.stream().map(i -> i.getIp() + ":" + i.getPort()).sorted().toList();
    }
  }

  /**
   * Spring Cloud's {@code /actuator/serviceregistry?status=DOWN}: {@code
   * NamingMaintainService.updateInstance} with {@code enabled=false} over HTTP takes a
   * gRPC-registered instance out of every consumer's list (Nacos and Roster SDK), its owner's
   * registering it again does not bring it back, and {@code enabled=true} does.
   */
  @Test
  void updateInstanceOverHttpDisablesForEveryConsumerUntilEnabled() throws Exception {
    NamingService provider = nacos();
    Instance instance = new Instance();
    instance.setIp("10.1.0.1");
    instance.setPort(8080);
    instance.setMetadata(Map.of("zone", "a"));
    provider.registerInstance("orders", "shop", instance);

    Latest nacosSeen = new Latest();
    nacos().subscribe("orders", "shop", nacosSeen::on);
    try (RosterClient sdk = RosterClient.builder().serverAddresses(server.address()).clientName("sdk").build()) {
      List<InstancesChangeEvent> sdkSeen = new CopyOnWriteArrayList<>();
      sdk.subscribe("orders", "shop", sdkSeen::add);
      await().atMost(bound()).untilAsserted(() -> {
        assertThat(nacosSeen.addresses()).containsExactly("10.1.0.1:8080");
        assertThat(sdkSeen).isNotEmpty();
        assertThat(sdkSeen.get(sdkSeen.size() - 1).instances()).hasSize(1);
      });

      NamingMaintainService maintain = NamingMaintainFactory.createMaintainService(properties());
      try {
        Instance down = provider.getAllInstances("orders", "shop", false).get(0);
        down.setEnabled(false);
        maintain.updateInstance("orders", "shop", down);
        await().atMost(bound()).untilAsserted(() -> {
          assertThat(nacosSeen.addresses()).isEmpty();
          assertThat(sdkSeen.get(sdkSeen.size() - 1).instances()).isEmpty();
        });

        provider.registerInstance("orders", "shop", instance); // the owner registers it again
        assertThat(curl("GET", "/nacos/v1/ns/instance/list?serviceName=orders&groupName=shop").body())
            .contains("\"hosts\":[]");

        down.setEnabled(true);
        maintain.updateInstance("orders", "shop", down);
        await().atMost(bound()).untilAsserted(() -> {
          assertThat(nacosSeen.addresses()).containsExactly("10.1.0.1:8080");
          assertThat(sdkSeen.get(sdkSeen.size() - 1).instances()).singleElement()
              .satisfies(i -> assertThat(i.metadata()).containsEntry("zone", "a"));
        });
      } finally {
        maintain.shutDown();
      }
    }
  }

  /**
   * The curl flow of docs/nacos-compat.md: register over HTTP, list it, let it go silent
   * (short timings in its metadata): a Nacos subscriber sees it turn unhealthy, then go; a beat
   * for it is answered 20404; the log level of a logger changes.
   */
  @Test
  void curlRegisterListHeartbeatExpiryAndLogLevel() throws Exception {
    Latest seen = new Latest();
    nacos().subscribe("billing", seen::on);
    String metadata = URLEncoder.encode("{\"preserved.heart.beat.interval\":\"200\","
        + "\"preserved.heart.beat.timeout\":\"1000\",\"preserved.ip.delete.timeout\":\"3000\"}", StandardCharsets.UTF_8);
    assertThat(curl("POST", "/nacos/v1/ns/instance?serviceName=billing&ip=10.2.0.1&port=9000&metadata=" + metadata))
        .isEqualTo(new Answer(200, "ok"));
    assertThat(curl("GET", "/nacos/v1/ns/instance/list?serviceName=billing").body()).contains("\"ip\":\"10.2.0.1\"");

    await().atMost(bound()).untilAsserted(() -> {
      assertThat(seen.hosts.get()).singleElement().satisfies(i -> assertThat(i.isHealthy()).isFalse());
    });
    await().atMost(bound()).untilAsserted(() -> assertThat(seen.addresses()).isEmpty());
    assertThat(curl("PUT", "/nacos/v1/ns/instance/beat?serviceName=billing&ip=10.2.0.1&port=9000").body())
        .contains("\"code\":20404");

    assertThat(curl("PUT", "/nacos/v1/ns/operator/log?logName=io.roster.server&logLevel=DEBUG"))
        .isEqualTo(new Answer(200, "ok"));
    assertThat(curl("PUT", "/nacos/v1/ns/operator/log?logName=io.roster.server&logLevel=INFO"))
        .isEqualTo(new Answer(200, "ok"));
    assertThat(curl("GET", "/nacos/v1/ns/operator/metrics").body()).isEqualTo("{\"status\":\"UP\"}");
    assertThat(curl("GET", "/nacos/v1/cs/configs?dataId=x&group=y").status()).isEqualTo(501);
  }
}
