package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import io.roster.server.testing.TcpProxy;

/**
 * The server jar and providers as real processes: a crashed provider, a frozen provider and a
 * restarted server, each observed by a subscriber through its listener.
 */
class ProcessFailureTest {

  private ServerProcess server;

  @BeforeEach
  void startServer() {
    server = ServerProcess.start("127.0.0.1", Ports.free());
  }

  @AfterEach
  void stopServer() throws Exception {
    server.close();
  }

  /** (a) kill -9 of a provider process: the subscriber sees the removal. */
  @Test
  void killedProviderIsRemovedForSubscribers() throws Exception {
    try (Subscriber sub = new Subscriber(server.address(), "crash-demo");
        ProviderProcess provider = new ProviderProcess(server.address(), "crash-demo", "10.1.0.1", 7001)) {
      provider.awaitRegistered();
      sub.await(Timing.seconds(10), Subscriber.hasPort(7001));
      provider.kill9();
      // The OS closes the dead process's sockets: no keepalive wait is needed.
      sub.await(Timing.seconds(5), Subscriber.lacksPort(7001));
    }
  }

  /**
   * (b) A provider whose connection is frozen by a proxy (no FIN, no RST, nothing): the server
   * hears no ping for keepalive time + timeout (4 s + 5 s by default), declares it gone and
   * subscribers are pushed.
   */
  @Test
  void frozenProviderIsRemovedWithinTheKeepaliveBound() throws Exception {
    try (TcpProxy proxy = new TcpProxy(server.host, server.port);
        Subscriber sub = new Subscriber(server.address(), "frozen-demo");
        ProviderProcess provider = new ProviderProcess(proxy.address(), "frozen-demo", "10.1.0.2", 7002)) {
      provider.awaitRegistered();
      sub.await(Timing.seconds(10), Subscriber.hasPort(7002));
      long frozenAt = System.nanoTime();
      proxy.freeze();
      long removedAt = sub.await(Timing.seconds(20), Subscriber.lacksPort(7002));
      assertThat(provider.isAlive()).isTrue();
      // Silent for keepalive time + timeout = 9 s at most by default; the HTTP/2 backstop
      // alone would take ~15 s. Slack for a loaded machine, scaled by Timing.
      assertThat(Duration.ofNanos(removedAt - frozenAt)).isLessThan(Timing.seconds(12));
    }
  }

  /**
   * (c) The server restarts (SIGTERM, then a new process on the same port): the SDK reconnects,
   * redoes its registration and subscription, and the subscriber sees the provider again.
   *
   * <p>Everything after the restart is checked against the new server itself: the subscriber's
   * cache already lists the provider (and holds an empty state back for a while), so its list
   * alone proves nothing. A client that never knew the old server finds the provider (the
   * registration was redone); the subscriber's cached state is one the new server made (a
   * newer revision) and lists it (the subscription was redone: the subscriber does not poll).
   * The deregistration is then
   * seen by a fresh client and by the subscriber at a newer revision still, which only a
   * provider registered on the new server can cause.
   */
  @Test
  void serverRestartIsHealedByReconnectAndRedo() throws Exception {
    restartHealsByReconnectAndRedo("restart-demo", "10.1.0.3", 7003, false);
  }

  /** (c') The same after kill -9 of the server: no reconnect frame, just a dead transport. */
  @Test
  void serverCrashIsHealedByReconnectAndRedo() throws Exception {
    restartHealsByReconnectAndRedo("crash-restart-demo", "10.1.0.4", 7004, true);
  }

  private void restartHealsByReconnectAndRedo(String service, String ip, int port, boolean crash) throws Exception {
    int serverPort = server.port;
    try (RosterClient providerClient = RosterClient.builder().serverAddresses(server.address()).build();
        // Push only: a poll would also bring the new server's state, redo of the subscription or not.
        Subscriber sub = new Subscriber(RosterClient.builder().serverAddresses(server.address())
            .clientName("it-subscriber").pollEnabled(false).build(), service)) {
      providerClient.registerInstance(service, Instance.of(ip, port));
      sub.await(Timing.seconds(10), Subscriber.hasPort(port));
      long revisionBefore = sub.cached().revision();

      if (crash) {
        server.kill9();
      } else {
        server.stop();
      }
      server = ServerProcess.start("127.0.0.1", serverPort);

      // Nobody restarts anything by hand: the fresh server learns the instance from redo.
      try (RosterClient fresh = RosterClient.builder().serverAddresses(server.address()).build()) {
        Awaitility.await().atMost(Timing.seconds(20)).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
            assertThat(fresh.getAllInstances(service)).as("%s on the new server", service)
                .extracting(Instance::port).containsExactly(port));
      }
      InstancesChangeEvent redone = sub.awaitNewer(Timing.seconds(20), revisionBefore, Subscriber.hasPort(port));
      assertThat(redone.instances()).filteredOn(i -> i.port() == port).hasSize(1);

      providerClient.deregisterInstance(service, ip, port);
      try (RosterClient fresh = RosterClient.builder().serverAddresses(server.address()).build()) {
        assertThat(fresh.getAllInstances(service)).as("%s on the new server", service).isEmpty();
      }
      sub.awaitNewer(Timing.seconds(10), redone.revision(), Subscriber.lacksPort(port));
    }
  }
}
