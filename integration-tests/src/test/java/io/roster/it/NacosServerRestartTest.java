package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The official nacos-client 2.5.1 across a server restart on the same port, after a crash (kill
 * -9) or a stop (SIGTERM, which asks the clients to move; with nowhere else to go they come
 * back): the clients' redo puts back every registration (single and batch) and every
 * subscription, with no help from the application.
 */
class NacosServerRestartTest {

  private ServerProcess server;
  private final List<NamingService> clients = new ArrayList<>();

  @AfterEach
  void cleanUp() throws Exception {
    for (NamingService c : clients) {
      c.shutDown();
    }
    if (server != null) {
      server.close();
    }
  }

  private NamingService nacos(int port) throws NacosException {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + (port - 1000));
    NamingService c = NamingFactory.createNamingService(p);
    clients.add(c);
    return c;
  }

  private static Instance instance(String ip, int port) {
    Instance i = new Instance();
    i.setIp(ip);
    i.setPort(port);
    return i;
  }

  @Test
  void afterAKilledServerRestartsTheRedoRestoresEveryRegistrationAndSubscription() throws Exception {
    restartRestoresEverything(false);
  }

  /** A stopping standalone server does not wait for Nacos clients that cannot go elsewhere. */
  @Test
  void afterAStoppedServerRestartsTheRedoRestoresEveryRegistrationAndSubscription() throws Exception {
    restartRestoresEverything(true);
  }

  private void restartRestoresEverything(boolean sigterm) throws Exception {
    Path cache = Files.createTempDirectory("nacos-restart-cache");
    System.setProperty("JM.SNAPSHOT.PATH", cache.toString());
    System.setProperty("JM.LOG.PATH", cache.resolve("logs").toString());
    int port = Ports.freeForNacos();
    server = ServerProcess.start("127.0.0.1", port);

    NamingService provider = nacos(port);
    provider.registerInstance("restart-a", instance("10.0.9.1", 80));
    provider.batchRegisterInstance("restart-b", "DEFAULT_GROUP", List.of(instance("10.0.9.2", 80),
        instance("10.0.9.3", 80)));
    NamingService consumer = nacos(port);
    Map<String, List<String>> seen = new ConcurrentHashMap<>();
    for (String service : List.of("restart-a", "restart-b", "restart-c")) {
      consumer.subscribe(service, e -> seen.put(service, ((NamingEvent) e).getInstances().stream()
          .map(i -> i.getIp() + ":" + i.getPort()).sorted().toList()));
    }
    Map<String, List<String>> all = Map.of("restart-a", List.of("10.0.9.1:80"),
        "restart-b", List.of("10.0.9.2:80", "10.0.9.3:80"));
    await().atMost(Timing.seconds(15)).untilAsserted(() -> assertThat(seen).containsAllEntriesOf(all));

    if (sigterm) {
      long stopAt = System.nanoTime();
      server.stop();
      long stopMs = (System.nanoTime() - stopAt) / 1_000_000;
      System.out.printf("standalone server with Nacos clients: SIGTERM to exit %d ms%n", stopMs);
      assertThat(stopMs).as("exit well within the 10 s grace").isLessThan(Timing.seconds(6).toMillis());
    } else {
      server.kill9();
    }
    server = ServerProcess.start("127.0.0.1", port);

    // The new process knew nothing: what it holds now came from the clients' redo.
    NamingService fresh = nacos(port);
    await().atMost(Timing.seconds(30)).ignoreExceptions().untilAsserted(() -> {
      assertThat(fresh.getAllInstances("restart-a")).extracting(Instance::getIp).containsExactly("10.0.9.1");
      assertThat(fresh.getAllInstances("restart-b")).extracting(Instance::getIp)
          .containsExactlyInAnyOrder("10.0.9.2", "10.0.9.3");
    });
    // The consumer's subscriptions were redone too: a change made now is pushed to it.
    fresh.registerInstance("restart-c", instance("10.0.9.4", 80));
    await().atMost(Timing.seconds(30)).untilAsserted(() -> {
      assertThat(seen).containsAllEntriesOf(all);
      assertThat(seen.get("restart-c")).containsExactly("10.0.9.4:80");
    });
  }
}
