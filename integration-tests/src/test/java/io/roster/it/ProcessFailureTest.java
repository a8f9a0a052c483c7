package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import io.roster.client.RosterClient;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

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
   */
  @Test
  void serverRestartIsHealedByReconnectAndRedo() throws Exception {
    int port = server.port;
    try (RosterClient providerClient = RosterClient.builder().serverAddresses(server.address()).build();
        Subscriber sub = new Subscriber(server.address(), "restart-demo")) {
      providerClient.registerInstance("restart-demo", Instance.of("10.1.0.3", 7003));
      sub.await(Timing.seconds(10), Subscriber.hasPort(7003));

      server.stop();
      server = ServerProcess.start("127.0.0.1", port);

      // Nobody restarts anything by hand: the fresh server learns the instance from redo.
      sub.await(Timing.seconds(20), Subscriber.hasPort(7003));
      providerClient.deregisterInstance("restart-demo", "10.1.0.3", 7003);
      sub.await(Timing.seconds(10), Subscriber.lacksPort(7003));
    }
  }

  /** (c') The same after kill -9 of the server: no reconnect frame, just a dead transport. */
  @Test
  void serverCrashIsHealedByReconnectAndRedo() throws Exception {
    int port = server.port;
    try (RosterClient providerClient = RosterClient.builder().serverAddresses(server.address()).build();
        Subscriber sub = new Subscriber(server.address(), "crash-restart-demo")) {
      providerClient.registerInstance("crash-restart-demo", Instance.of("10.1.0.4", 7004));
      sub.await(Timing.seconds(10), Subscriber.hasPort(7004));

      server.kill9();
      server = ServerProcess.start("127.0.0.1", port);

      sub.await(Timing.seconds(20), Subscriber.hasPort(7004));
      assertThat(sub.latest()).filteredOn(i -> i.port() == 7004).hasSize(1);
    }
  }
}
