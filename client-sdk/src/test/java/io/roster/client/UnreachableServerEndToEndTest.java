package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.client.RosterException.Code;
import io.roster.server.RosterServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** No server yet, or a dead first address: the client waits, keeps its state, and recovers. */
class UnreachableServerEndToEndTest {

  private RosterServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void aRegistrationMadeWhileNoServerIsUpIsAppliedOnceOneIs() throws IOException {
    int port = freePort();
    long start = System.nanoTime();
    try (RosterClient client = RosterClient.builder()
        .serverAddresses("127.0.0.1:" + port)
        .requestTimeout(TestServers.scaled(Duration.ofMillis(300)))
        .build()) {
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .as("build() blocks only briefly").isLessThan(TestServers.scaled(Duration.ofSeconds(2)));

      assertThatThrownBy(() -> client.registerInstance("e2e.later", "10.0.5.1", 80))
          .isInstanceOfSatisfying(RosterException.class,
              e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE))
          .hasMessageContaining("kept");
      assertThatThrownBy(() -> client.getAllInstances("e2e.later"))
          .isInstanceOfSatisfying(RosterException.class,
              e -> assertThat(e.code()).isEqualTo(Code.UNAVAILABLE));

      server = TestServers.start(port);
      try (RosterClient observer = TestServers.client(server).build()) {
        await().atMost(TestServers.patience()).untilAsserted(() ->
            assertThat(observer.getAllInstances("e2e.later")).extracting(Instance::ip)
                .containsExactly("10.0.5.1"));
      }
    }
  }

  @Test
  void aDeadFirstAddressIsSkipped() throws IOException {
    int dead = freePort();
    server = TestServers.start(0);
    try (RosterClient client = RosterClient.builder()
        .serverAddresses("127.0.0.1:" + dead + ", 127.0.0.1:" + server.port()).randomStart(false)
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(3)))
        .build()) {
      client.registerInstance("e2e.failover", "10.0.6.1", 80);
      assertThat(client.getAllInstances("e2e.failover")).extracting(Instance::ip)
          .containsExactly("10.0.6.1");
    }
  }

  @Test
  void clientsOfOneListStartAtRandomServersOfIt() throws IOException {
    server = TestServers.start(0);
    RosterServer second = TestServers.start(0);
    String list = "127.0.0.1:" + server.port() + ",127.0.0.1:" + second.port();
    java.util.List<RosterClient> clients = new java.util.ArrayList<>();
    try {
      // 20 clients all on one of two servers: one chance in 2^19 with a fair start.
      for (int i = 0; i < 20; i++) {
        clients.add(RosterClient.builder().serverAddresses(list).clientName("spread-" + i).build());
        clients.get(i).registerInstance("e2e.spread", "10.0.7.1", 1000 + i);
      }
      assertThat(server.sessions().count()).isPositive();
      assertThat(second.sessions().count()).isPositive();
      assertThat(server.sessions().count() + second.sessions().count()).isEqualTo(20);
    } finally {
      clients.forEach(RosterClient::close);
      second.close();
    }
  }
}
