package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The failover snapshot: a client that starts while every server is down serves the last known lists. */
class FailoverEndToEndTest {

  @TempDir
  Path dir;

  private static List<String> ips(List<Instance> list) {
    return list.stream().map(Instance::ip).sorted().toList();
  }

  private long files() throws Exception {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.toString().endsWith(".roster")).count();
    }
  }

  @Test
  void aClientStartingWithNoServerServesTheSnapshotUntilAServerAnswers() throws Exception {
    RosterServer server = TestServers.start(0);
    int port = server.port();
    try (RosterClient provider = TestServers.client(server).drainTimeout(Duration.ZERO).build();
        RosterClient before = TestServers.client(server).failoverDir(dir).build()) {
      provider.registerInstance("fo", Instance.of("10.7.0.1", 80));
      provider.registerInstance("fo", Instance.of("10.7.0.2", 80));
      before.subscribe("fo", e -> { });
      await().atMost(TestServers.patience()).until(() -> before.getAllInstances("fo").size() == 2);
      await().atMost(TestServers.patience()).until(() -> files() == 1);
    } finally {
      server.close();
    }

    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    try (RosterClient after = RosterClient.builder().serverAddresses("127.0.0.1:" + port)
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(1))).failoverDir(dir).build()) {
      after.subscribe("fo", events::add); // does not wait for a server: the snapshot answers

      await().atMost(TestServers.patience()).until(() -> !events.isEmpty());
      assertThat(ips(events.get(0).instances())).containsExactly("10.7.0.1", "10.7.0.2");
      assertThat(ips(after.getAllInstances("fo"))).containsExactly("10.7.0.1", "10.7.0.2");
      assertThatThrownBy(() -> after.getAllInstances("never-seen"))
          .isInstanceOfSatisfying(RosterException.class,
              e -> assertThat(e.code()).isIn(RosterException.Code.UNAVAILABLE, RosterException.Code.TIMEOUT));

      RosterServer back = TestServers.start(port);
      try (RosterClient provider = TestServers.client(back).drainTimeout(Duration.ZERO).build()) {
        provider.registerInstance("fo", Instance.of("10.7.0.3", 80));
        // The server's state is newer than the snapshot: it replaces it.
        await().atMost(TestServers.patience()).until(() -> ips(after.getAllInstances("fo")).equals(List.of("10.7.0.3")));
        // Listeners heard the snapshot's instances go: in the event that added 10.7.0.3, or in
        // an earlier empty state when the client reached the server before the provider did.
        assertThat(events.stream().flatMap(e -> e.removed().stream()).map(Instance::ip))
            .contains("10.7.0.1", "10.7.0.2");
      } finally {
        back.close();
      }
    }
  }
}
