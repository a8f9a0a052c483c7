package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One large service must not break its subscribers (decision 21). Unbounded, 300 valid
 * registrations with 15 KB of metadata each make the service's state 4.4 MiB, over gRPC's
 * default 4 MiB message limit: every SDK subscriber of it goes into a reconnect loop (each loop
 * removing its own instances, so observers of unrelated services see empties) and {@code
 * getAllInstances} throws RESOURCE_EXHAUSTED.
 *
 * <p>The server bounds each service's bytes (default 3 MiB, under the 4 MiB limit): the
 * registration that would cross it is refused with an error naming the service, the limit and
 * the flag, and everything else keeps working. Real server, real loopback sockets, default
 * settings.
 */
class LargeServiceEndToEndTest {

  private final List<AutoCloseable> resources = new ArrayList<>();
  private RosterServer server;

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
    if (server != null) {
      server.close();
    }
  }

  private RosterClient newClient(RosterClient.Builder builder) {
    RosterClient c = builder.build();
    resources.add(c);
    return c;
  }

  /** 15 KB of metadata: 15 values of 1,000 characters. */
  private static Map<String, String> fifteenKb(int n) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < 15; i++) {
      m.put("k" + i, (n + "-" + i + "-").repeat(1000).substring(0, 1000));
    }
    return m;
  }

  @Test
  void theRegistrationThatWouldOverflowAServiceIsRefusedAndSubscribersKeepTheirSessions() {
    server = TestServers.start(0);
    // Subscribers that rely on pushes only: a reconnect loop would show in their sessions.
    RosterClient subscriber = newClient(TestServers.client(server).clientId("big-subscriber").pollEnabled(false));
    RosterClient observer = newClient(TestServers.client(server).clientId("observer").pollEnabled(false));
    RosterClient other = newClient(TestServers.client(server).clientId("other-provider"));
    RosterClient provider = newClient(TestServers.client(server).clientId("big-provider"));

    other.registerInstance("e2e.unrelated", "10.9.0.1", 80);
    List<InstancesChangeEvent> unrelated = new CopyOnWriteArrayList<>();
    observer.subscribe("e2e.unrelated", unrelated::add);
    List<InstancesChangeEvent> big = new CopyOnWriteArrayList<>();
    subscriber.subscribe("e2e.big", big::add);
    await().atMost(TestServers.patience()).until(() -> !unrelated.isEmpty());
    Set<String> sessionsBefore = connectionIds();

    int accepted = 0;
    RosterException refused = null;
    for (int n = 0; n < 300 && refused == null; n++) {
      Instance instance = Instance.builder().ip("10.1." + (n / 250) + "." + (n % 250)).port(8080)
          .metadata(fifteenKb(n)).build();
      try {
        provider.registerInstance("e2e.big", instance);
        accepted++;
      } catch (RosterException e) {
        refused = e;
      }
    }

    assertThat(refused).as("a registration past 3 MiB is refused").isNotNull();
    assertThat(refused.code()).isEqualTo(RosterException.Code.RESOURCE_EXHAUSTED);
    assertThat(refused.getMessage())
        .startsWith("service public/DEFAULT_GROUP@@e2e.big would hold ")
        .contains("(limit: 3145728, see --max-service-bytes");
    assertThat(accepted).isBetween(150, 250);
    // The next one is refused too, and changes nothing.
    assertThatThrownBy(() -> provider.registerInstance("e2e.big",
        Instance.builder().ip("10.2.0.1").port(8080).metadata(fifteenKb(999)).build()))
        .isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.code()).isEqualTo(RosterException.Code.RESOURCE_EXHAUSTED));

    int expected = accepted;
    await().atMost(TestServers.patience()).untilAsserted(() -> {
      assertThat(big).isNotEmpty();
      assertThat(big.get(big.size() - 1).instances()).hasSize(expected);
    });
    // Queries work: the subscriber's cache, and a fresh client's query of the whole state.
    assertThat(subscriber.getAllInstances("e2e.big")).hasSize(expected);
    RosterClient fresh = newClient(TestServers.client(server).clientId("fresh"));
    assertThat(fresh.getAllInstances("e2e.big")).hasSize(expected);
    // Nobody reconnected, and nobody watching an unrelated service saw it empty.
    assertThat(connectionIds()).containsAll(sessionsBefore);
    assertThat(unrelated).allSatisfy(e -> assertThat(e.instances()).hasSize(1));
    assertThat(observer.getAllInstances("e2e.unrelated")).hasSize(1);
  }

  private Set<String> connectionIds() {
    return server.sessions().all().stream().map(s -> s.info().connectionId()).collect(Collectors.toSet());
  }
}
