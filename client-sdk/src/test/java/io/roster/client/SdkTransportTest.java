package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.session.Session;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import io.roster.server.testing.TcpProxy;

/**
 * The SDK's transport behaviour over real sockets (in-JVM servers, a TCP proxy that freezes, a
 * gRPC relay with scripted faults): what the connection manager tests show on a fake connector,
 * shown here on the real one.
 */
class SdkTransportTest {

  private final List<AutoCloseable> resources = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    for (int i = resources.size() - 1; i >= 0; i--) {
      resources.get(i).close();
    }
  }

  private <T extends AutoCloseable> T track(T resource) {
    resources.add(resource);
    return resource;
  }

  private RosterServer server(Duration keepaliveTime, Duration keepaliveTimeout) {
    return track(RosterServer.start(ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0)
        .keepaliveTime(keepaliveTime).keepaliveTimeout(keepaliveTimeout)
        .shutdownGrace(TestServers.scaled(Duration.ofSeconds(5))).build()));
  }

  private RosterServer server() {
    return server(Duration.ofSeconds(4), Duration.ofSeconds(5));
  }

  private static String address(RosterServer server) {
    return "127.0.0.1:" + server.port();
  }

  private static List<Session> sessionsOf(RosterServer server, String clientId) {
    return server.sessions().all().stream().filter(s -> s.info().clientId().equals(clientId)).toList();
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private RosterClient client(String servers, String clientId) {
    return track(RosterClient.builder().serverAddresses(servers).randomStart(false).clientId(clientId)
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(3))).drainTimeout(Duration.ZERO).build());
  }

  /** A listener that accepts TCP and never answers: no welcome, so the connect timeout moves on. */
  @Test
  void noWelcomeWithinTheConnectTimeoutMovesToTheNextServer() throws Exception {
    RosterServer server = server();
    TcpProxy mute = track(new TcpProxy(server.port(), true));
    Duration connectTimeout = TestServers.scaled(Duration.ofMillis(800)); // the request timeout
    long start = System.nanoTime();

    RosterClient client = track(RosterClient.builder()
        .serverAddresses(mute.address() + "," + address(server)).randomStart(false).clientId("sdk-mute")
        .requestTimeout(connectTimeout).drainTimeout(Duration.ZERO).build());

    await().atMost(TestServers.patience()).until(() -> sessionsOf(server, "sdk-mute").size() == 1);
    long tookNanos = System.nanoTime() - start;
    assertThat(mute.accepted()).as("the first server was tried").isGreaterThanOrEqualTo(1);
    assertThat(tookNanos).as("it moved on because of the connect timeout, not an error")
        .isGreaterThanOrEqualTo(connectTimeout.toNanos());
    client.registerInstance("transport.mute", "10.1.0.1", 80);
    assertThat(sessionsOf(server, "sdk-mute").get(0).instanceCount()).isEqualTo(1);
  }

  /**
   * A long request timeout does not make the client wait as long on a mute server: the connect
   * timeout is its own setting, and a blocking call issued at once waits across the attempts.
   */
  @Test
  void theConnectTimeoutMovesOnLongBeforeALongRequestTimeout() throws Exception {
    RosterServer server = server();
    TcpProxy mute = track(new TcpProxy(server.port(), true));
    Duration connectTimeout = TestServers.scaled(Duration.ofMillis(800));
    Duration requestTimeout = TestServers.scaled(Duration.ofSeconds(20));
    long start = System.nanoTime();

    RosterClient client = track(RosterClient.builder()
        .serverAddresses(mute.address() + "," + address(server)).randomStart(false).clientId("sdk-mute-long")
        .requestTimeout(requestTimeout).connectTimeout(connectTimeout).drainTimeout(Duration.ZERO).build());
    client.registerInstance("transport.mute-long", "10.1.0.3", 80);

    long tookNanos = System.nanoTime() - start;
    assertThat(mute.accepted()).as("the first server was tried").isGreaterThanOrEqualTo(1);
    assertThat(tookNanos).as("left the mute server after the connect timeout, not the request timeout")
        .isGreaterThanOrEqualTo(connectTimeout.toNanos()).isLessThan(requestTimeout.toNanos() / 2);
    assertThat(sessionsOf(server, "sdk-mute-long").get(0).instanceCount()).isEqualTo(1);
  }

  @Test
  void aConnectTimeoutThatIsNotPositiveIsRefusedByName() {
    assertThatThrownBy(() -> RosterClient.builder().serverAddresses("127.0.0.1:1").connectTimeout(Duration.ZERO)
        .build()).hasMessage("connectTimeout: PT0S (expected: a positive duration)");
  }

  /**
   * The server goes silent (the proxy freezes; no TCP reset): the client's own ping goes
   * unanswered, it reconnects to the next server and redoes its registration, long before the
   * server (keepalive 30 s + 30 s here) could notice anything.
   */
  @Test
  void aSilentServerIsNoticedByTheClientWhichReconnectsAndRedoes() throws Exception {
    RosterServer server = server(Duration.ofSeconds(30), Duration.ofSeconds(30));
    TcpProxy proxy = track(new TcpProxy(server.port(), false));
    RosterClient client = track(RosterClient.builder()
        .serverAddresses(proxy.address() + "," + address(server)).randomStart(false).clientId("sdk-silent")
        .keepAlive(TestServers.scaled(Duration.ofMillis(300)), TestServers.scaled(Duration.ofMillis(500)))
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(3))).drainTimeout(Duration.ZERO).build());
    client.registerInstance("transport.silent", "10.1.0.2", 80);
    List<Session> before = sessionsOf(server, "sdk-silent");
    assertThat(before).hasSize(1);
    String frozenConnection = before.get(0).info().connectionId();

    proxy.freeze();

    await().atMost(TestServers.patience()).untilAsserted(() -> assertThat(sessionsOf(server, "sdk-silent"))
        .anySatisfy(s -> {
          assertThat(s.info().connectionId()).isNotEqualTo(frozenConnection);
          assertThat(s.instanceCount()).as("redone on the new connection").isEqualTo(1);
        }));
    assertThat(sessionsOf(server, "sdk-silent")).extracting(s -> s.info().connectionId())
        .as("the frozen session is still open on the server: the client noticed, not the server")
        .contains(frozenConnection);
    assertThat(server.registry().snapshot(io.roster.server.model.ServiceKey.of("", "", "transport.silent"))
        .instances()).hasSize(1);
  }

  /** A reconnect frame that suggests a server: the client goes there, not to the next of its list. */
  @Test
  void aReconnectGoesToTheSuggestedServer() throws Exception {
    RosterServer server = server();
    GrpcRelay asking = track(new GrpcRelay(server.port()));
    GrpcRelay suggested = track(new GrpcRelay(server.port()));
    GrpcRelay next = track(new GrpcRelay(server.port()));
    asking.reconnectTo.set(suggested.address());

    RosterClient client = client(asking.address() + "," + next.address(), "sdk-suggested");
    client.registerInstance("transport.suggested", "10.1.0.3", 80);

    await().atMost(TestServers.patience()).until(() -> suggested.sessions.get() == 1
        && sessionsOf(server, "sdk-suggested").size() == 1
        && sessionsOf(server, "sdk-suggested").get(0).instanceCount() == 1);
    assertThat(asking.sessions.get()).isEqualTo(1);
    assertThat(next.sessions.get()).as("the list's next server was not needed").isZero();
  }

  /** The suggested server is down: the client then moves on to the next server of its list. */
  @Test
  void aSuggestedServerThatIsDownIsFollowedByTheNextOfTheList() throws Exception {
    RosterServer server = server();
    GrpcRelay asking = track(new GrpcRelay(server.port()));
    GrpcRelay next = track(new GrpcRelay(server.port()));
    asking.reconnectTo.set("127.0.0.1:" + freePort());

    RosterClient client = client(asking.address() + "," + next.address(), "sdk-suggested-down");
    client.registerInstance("transport.suggested.down", "10.1.0.4", 80);

    await().atMost(TestServers.patience()).until(() -> next.sessions.get() == 1
        && sessionsOf(server, "sdk-suggested-down").size() == 1
        && sessionsOf(server, "sdk-suggested-down").get(0).instanceCount() == 1);
    assertThat(asking.sessions.get()).isEqualTo(1);
  }

  /** A real server shutting down sends reconnect without a suggestion: the next server of the list. */
  @Test
  void aStoppingServerSendsItsClientsToTheNextServer() throws Exception {
    RosterServer first = server();
    RosterServer second = server();
    RosterClient client = client(address(first) + "," + address(second), "sdk-moving");
    client.registerInstance("transport.moving", "10.1.0.5", 80);
    assertThat(sessionsOf(first, "sdk-moving")).hasSize(1);

    Thread closer = new Thread(first::close, "closer");
    closer.start();

    await().atMost(TestServers.patience()).until(() -> sessionsOf(second, "sdk-moving").size() == 1
        && sessionsOf(second, "sdk-moving").get(0).instanceCount() == 1);
    closer.join(TestServers.patience().toMillis());
    assertThat(closer.isAlive()).as("the stopping server finished once its client left").isFalse();
  }

  /**
   * The connected server answers the {@code query} frame UNAVAILABLE (it is stopping): the client
   * asks the same server by call, which refuses too, then the next server, which answers.
   */
  @Test
  void aQueryFallsBackFromTheFrameToTheCallAndThenToTheNextServer() throws Exception {
    RosterServer server = server();
    GrpcRelay stopping = track(new GrpcRelay(server.port()));
    stopping.queryFramesUnavailable = true;
    stopping.queriesUnavailable = true;
    GrpcRelay next = track(new GrpcRelay(server.port()));
    RosterClient provider = client(address(server), "sdk-query-provider");
    provider.registerInstance("transport.query", "10.1.0.6", 80);
    RosterClient consumer = client(stopping.address() + "," + next.address(), "sdk-query-consumer");
    consumer.registerInstance("transport.query.self", "10.1.0.7", 80); // returns once the session is active

    List<Instance> found = consumer.getAllInstances("transport.query");

    assertThat(found).extracting(Instance::ip).containsExactly("10.1.0.6");
    assertThat(stopping.queryFrames.get()).as("asked on the stream first").isEqualTo(1);
    assertThat(stopping.queryCalls.get()).as("then by call, same server").isEqualTo(1);
    assertThat(next.queryCalls.get()).as("then the next server").isEqualTo(1);
    assertThat(next.sessions.get()).as("the session stayed where it was").isZero();
  }

  /**
   * A push lost on the way (the relay drops every push from now on; the server re-sends, and
   * those are lost too) is repaired by the poll, within its interval.
   */
  @Test
  void aLostPushIsRepairedByThePollWithinItsInterval() throws Exception {
    RosterServer server = server();
    GrpcRelay relay = track(new GrpcRelay(server.port()));
    Duration pollInterval = TestServers.scaled(Duration.ofSeconds(1));
    RosterClient provider = client(address(server), "sdk-poll-provider");
    RosterClient consumer = track(RosterClient.builder().serverAddresses(relay.address())
        .clientId("sdk-poll-consumer").pollInterval(pollInterval)
        .requestTimeout(TestServers.scaled(Duration.ofSeconds(3))).drainTimeout(Duration.ZERO).build());
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    provider.registerInstance("transport.poll", "10.1.0.8", 80);
    consumer.subscribe("transport.poll", events::add);
    await().atMost(TestServers.patience()).until(() -> lastIps(events).equals(List.of("10.1.0.8")));
    int pollsBefore = relay.queryCalls.get();

    relay.dropPushes = true;
    long changedAt = System.nanoTime();
    provider.registerInstance("transport.poll", "10.1.0.9", 80);

    await().atMost(pollInterval.plus(TestServers.scaled(Duration.ofSeconds(1))))
        .until(() -> lastIps(events).equals(List.of("10.1.0.8", "10.1.0.9")));
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - changedAt);
    assertThat(relay.droppedPushes.get()).as("the push was lost").isGreaterThanOrEqualTo(1);
    assertThat(relay.queryCalls.get()).as("a poll repaired it").isGreaterThan(pollsBefore);
    assertThat(tookMs).isLessThanOrEqualTo(pollInterval.plus(TestServers.scaled(Duration.ofSeconds(1))).toMillis());
  }

  private static List<String> lastIps(List<InstancesChangeEvent> events) {
    if (events.isEmpty()) {
      return List.of();
    }
    return events.get(events.size() - 1).instances().stream().map(Instance::ip).sorted().toList();
  }
}
