package io.roster.bench.driver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.alibaba.nacos.api.PropertyKeyConst;
import com.alibaba.nacos.api.naming.listener.Event;
import com.alibaba.nacos.api.naming.listener.EventListener;
import com.alibaba.nacos.api.naming.listener.NamingEvent;
import com.alibaba.nacos.api.naming.pojo.Instance;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** The nacos driver's mapping, with no Nacos server anywhere. */
class NacosDriverTest {

  @Test
  void endpointBecomesADefaultEphemeralInstance() {
    Instance i = NacosDriver.toNacos(new Endpoint("10.0.0.7", 8080));
    assertThat(i.getIp()).isEqualTo("10.0.0.7");
    assertThat(i.getPort()).isEqualTo(8080);
    assertThat(i.getWeight()).isEqualTo(1.0);
    assertThat(i.isHealthy()).isTrue();
    assertThat(i.isEnabled()).isTrue();
    assertThat(i.isEphemeral()).isTrue();
    assertThat(i.getClusterName()).isEqualTo("DEFAULT");
  }

  @Test
  void onlyEnabledInstancesAreVisibleInTheirOrder() {
    Instance a = NacosDriver.toNacos(new Endpoint("10.0.0.2", 1));
    Instance b = NacosDriver.toNacos(new Endpoint("10.0.0.1", 2));
    Instance off = NacosDriver.toNacos(new Endpoint("10.0.0.3", 3));
    off.setEnabled(false);
    assertThat(NacosDriver.fromNacos(List.of(a, off, b)))
        .containsExactly(new Endpoint("10.0.0.2", 1), new Endpoint("10.0.0.1", 2));
    assertThat(NacosDriver.fromNacos(null)).isEmpty();
  }

  @Test
  void publicNamespaceIsNacosDefaultAndOthersAreSet() {
    Properties p = NacosDriver.properties("nacos.local:8848", "public");
    assertThat(p.getProperty(PropertyKeyConst.SERVER_ADDR)).isEqualTo("nacos.local:8848");
    assertThat(p.getProperty(PropertyKeyConst.NAMESPACE)).isNull();
    assertThat(NacosDriver.properties("h:8848", "dev").getProperty(PropertyKeyConst.NAMESPACE)).isEqualTo("dev");
  }

  @Test
  void listenerPassesNamingEventsAndIgnoresOtherEvents() {
    List<List<Endpoint>> got = new ArrayList<>();
    EventListener l = NacosDriver.listener(got::add);
    l.onEvent(new NamingEvent("orders", List.of(NacosDriver.toNacos(new Endpoint("10.0.0.9", 9)))));
    l.onEvent(new Event() { });
    assertThat(got).containsExactly(List.of(new Endpoint("10.0.0.9", 9)));
  }

  /**
   * {@code --driver nacos} makes the Nacos driver (and {@code roster} the Roster one); an
   * unknown name is refused naming the flag. Building the Nacos one connects nowhere: a
   * listening socket given as its target has no connection waiting afterwards.
   */
  @Test
  void driversAreChosenByNameAndTheNacosOneConnectsNowhereUntilAsked() throws Exception {
    try (ServerSocketChannel http = ServerSocketChannel.open().bind(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0))) {
      http.configureBlocking(false);
      String target = "127.0.0.1:" + ((InetSocketAddress) http.getLocalAddress()).getPort();
      try (Driver d = Drivers.create("nacos", target, RosterDriver.MassMode.RAW)) {
        assertThat(d).isInstanceOf(NacosDriver.class);
        assertThat(d.name()).isEqualTo("nacos");
        assertThat(d.describeMassClients()).contains("NamingService");
        assertThat(http.accept()).as("a connection to the target").isNull();
      }
      assertThat(System.getProperty("nacos.logging.default.config.enabled"))
          .as("nacos-client kept from installing its own logging").isEqualTo("false");
    }
    try (Driver d = Drivers.create("roster", "127.0.0.1:1", RosterDriver.MassMode.RAW)) {
      assertThat(d).isInstanceOf(RosterDriver.class);
      assertThat(d.name()).isEqualTo("roster");
    }
    assertThatThrownBy(() -> Drivers.create("zookeeper", "h:1", RosterDriver.MassMode.RAW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--driver: \"zookeeper\" (expected: roster or nacos)");
  }
}
