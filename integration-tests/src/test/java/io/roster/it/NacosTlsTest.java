package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.exception.NacosException;
import com.alibaba.nacos.api.naming.NamingFactory;
import com.alibaba.nacos.api.naming.NamingService;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import io.roster.server.testing.TestPki;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerLauncher;
import io.roster.server.testing.process.ServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official {@code nacos-client} 2.5.1 over TLS against a real Roster server process started
 * with {@code --tls-cert} and {@code --tls-key} (and {@code --tls-client-ca}), configured with
 * Nacos's own client properties, {@code nacos.remote.client.rpc.tls.*} (docs/operations.md, TLS).
 */
class NacosTlsTest {

  @TempDir
  Path dir;

  private ServerProcess server;
  private final List<NamingService> clients = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (NamingService c : clients) {
      c.shutDown();
    }
    if (server != null) {
      server.close();
    }
  }

  private ServerProcess start(TestPki pki, boolean mutual) throws Exception {
    Path cache = Files.createDirectories(dir.resolve("nacos-cache"));
    System.setProperty("JM.SNAPSHOT.PATH", cache.toString());
    System.setProperty("JM.LOG.PATH", cache.resolve("logs").toString());
    int port = Ports.freeForNacos();
    server = ServerLauncher.forTests().withProbe(pki.credentials(mutual))
        .start("127.0.0.1", port, pki.flags(mutual).toArray(String[]::new));
    return server;
  }

  /** A NamingService on TLS trusting the test CA; presenting {@code clientCert} when given. */
  private NamingService nacos(TestPki pki, Path... clientCertAndKey) throws NacosException {
    Properties p = new Properties();
    p.setProperty(PropertyKeyConst.SERVER_ADDR, "127.0.0.1:" + (server.port - 1000));
    p.setProperty("nacos.remote.client.rpc.tls.enable", "true");
    // Nacos reads these through its resource loader: a file needs the file: prefix.
    p.setProperty("nacos.remote.client.rpc.tls.trustCollectionChainPath", "file:" + pki.caPem);
    if (clientCertAndKey.length == 2) {
      p.setProperty("nacos.remote.client.rpc.tls.mutualAuth", "true");
      p.setProperty("nacos.remote.client.rpc.tls.certChainFile", "file:" + clientCertAndKey[0]);
      p.setProperty("nacos.remote.client.rpc.tls.certPrivateKey", "file:" + clientCertAndKey[1]);
    }
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
  void registersAndDiscoversOverTls() throws Exception {
    TestPki pki = TestPki.in(dir);
    start(pki, false);
    NamingService provider = nacos(pki);
    provider.registerInstance("tls-orders", instance("10.0.0.1", 8080));

    NamingService consumer = nacos(pki);
    AtomicReference<List<Instance>> pushed = new AtomicReference<>();
    consumer.subscribe("tls-orders", e -> pushed.set(((NamingEvent) e).getInstances()));
    await().atMost(Timing.seconds(15)).untilAsserted(() -> assertThat(pushed.get()).extracting(Instance::getIp)
        .containsExactly("10.0.0.1"));
    // Another application (one Nacos 2.x connection holds one instance of a service).
    nacos(pki).registerInstance("tls-orders", instance("10.0.0.2", 8080));
    await().atMost(Timing.seconds(15)).untilAsserted(() -> assertThat(pushed.get()).extracting(Instance::getIp)
        .containsExactlyInAnyOrder("10.0.0.1", "10.0.0.2"));
    assertThat(consumer.getAllInstances("tls-orders", false)).hasSize(2);
  }

  @Test
  void registersAndDiscoversOverMutualTls() throws Exception {
    TestPki pki = TestPki.in(dir);
    start(pki, true);
    Path[] app = pki.client(pki.ca, "nacos-app");
    NamingService provider = nacos(pki, app);
    provider.registerInstance("tls-payments", instance("10.0.1.1", 9000));
    NamingService consumer = nacos(pki, app);
    await().atMost(Timing.seconds(15)).untilAsserted(() -> assertThat(consumer.getAllInstances("tls-payments", false))
        .extracting(Instance::getIp).containsExactly("10.0.1.1"));
  }
}
