package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.DrainResult;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.roster.server.testing.TcpProxy;

/**
 * Drain against the server jar as a real process: three subscribers that ack and one whose
 * connection a proxy has frozen (no FIN, no RST, nothing forwarded).
 */
class DrainProcessTest {

  private ServerProcess server;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @BeforeEach
  void start() {
    server = ServerProcess.start("127.0.0.1", Ports.free());
  }

  @AfterEach
  void stop() throws Exception {
    for (AutoCloseable c : closeables) {
      c.close();
    }
    server.close();
  }

  private RosterClient client(String address) {
    RosterClient c = RosterClient.builder().serverAddresses(address).drainTimeout(Duration.ZERO).build();
    closeables.add(c);
    return c;
  }

  private RosterClient subscriber(String address) {
    RosterClient c = client(address);
    c.subscribe("drain-it", e -> { });
    Awaitility.await().atMost(Timing.seconds(10)).until(() -> c.getAllInstances("drain-it").size() == 1);
    return c;
  }

  @Test
  void threeAckOneIsFrozenAndTheDrainReturnsAtItsTimeout() throws Exception {
    RosterClient provider = client(server.address());
    provider.registerInstance("drain-it", Instance.of("10.4.0.1", 8080));
    List<RosterClient> acking = List.of(subscriber(server.address()), subscriber(server.address()),
        subscriber(server.address()));
    TcpProxy proxy = new TcpProxy(server.host, server.port);
    closeables.add(proxy);
    subscriber(proxy.address());
    proxy.freeze();

    // The three acks must come within the drain's timeout: scaled. "Not before the timeout" is
    // not scaled up; "not long after it" is.
    Duration timeout = Timing.seconds(2);
    long start = System.nanoTime();
    DrainResult r = provider.drain(timeout);
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertThat(r).isEqualTo(new DrainResult(4, 3, 1, 0));
    assertThat(took).as("returns at the %s timeout, not later", timeout)
        .isBetween(timeout.minusMillis(100), timeout.plus(Timing.seconds(3)));
    for (RosterClient c : acking) {
      assertThat(c.getAllInstances("drain-it")).isEmpty();
    }
  }

  @Test
  void aKilledSubscriberDoesNotHoldTheDrain() throws Exception {
    RosterClient provider = client(server.address());
    provider.registerInstance("drain-it", Instance.of("10.4.0.1", 8080));
    subscriber(server.address());
    try (ProviderProcess other = new ProviderProcess(server.address(), "drain-it-other", "10.4.0.9", 9000,
        "drain-it")) {
      other.awaitRegistered(); // and subscribed to drain-it
      other.kill9();

      DrainResult r = provider.drain(Timing.atMost(Timing.seconds(30), Duration.ofSeconds(60))); // the SDK's limit

      // The killed process's session ends at once (its kernel resets the connection), so the
      // drain does not wait 30 s for it: either it was already gone, or it counts as disconnected.
      assertThat(r.acked()).isEqualTo(1);
      assertThat(r.timedOut()).isZero();
    }
  }
}
