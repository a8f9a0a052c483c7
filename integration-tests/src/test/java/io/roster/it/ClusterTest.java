package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.Instance;
import io.roster.client.InstancesChangeEvent;
import io.roster.client.RosterClient;
import io.roster.server.testing.process.LocalCluster;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Three real server processes on 127.0.0.1-3 forming one cluster (docs/cluster.md):
 * a change through one member reaches subscribers of another, and a member's death moves its
 * clients without any subscriber seeing their instances go.
 */
class ClusterTest {

  private static final String SERVICE = "cluster-svc";
  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private LocalCluster cluster;

  private RosterClient client(String servers, String name) {
    // In the order given: a test says which member each client starts at.
    RosterClient c = RosterClient.builder().serverAddresses(servers).randomStart(false).clientName(name)
        .requestTimeout(Timing.seconds(10)).build();
    local.closing(c);
    return c;
  }

  @Test
  void aRegistrationThroughOneMemberReachesTheOthers() throws Exception {
    cluster = local.start();
    RosterClient provider = client(cluster.address(0), "provider");
    Subscriber subscriber = new Subscriber(client(cluster.address(2), "subscriber"), SERVICE);
    RosterClient querier = client(cluster.address(1), "querier");
    // An xDS client on a third member: every member serves the whole registry.
    java.util.Set<Integer> xdsPorts = java.util.concurrent.ConcurrentHashMap.newKeySet();
    io.grpc.ManagedChannel xds = io.grpc.Grpc.newChannelBuilder(cluster.address(1),
        io.grpc.InsecureChannelCredentials.create()).build();
    local.closing(xds::shutdownNow);
    String endpoints = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc.newStub(xds)
        .streamAggregatedResources(new io.grpc.stub.StreamObserver<>() {
          @Override
          public void onNext(io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse r) {
            try {
              xdsPorts.clear();
              for (var locality : r.getResources(0).unpack(
                  io.grpc.xds.shaded.io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.class).getEndpointsList()) {
                locality.getLbEndpointsList().forEach(e -> xdsPorts.add(
                    e.getEndpoint().getAddress().getSocketAddress().getPortValue()));
              }
            } catch (com.google.protobuf.InvalidProtocolBufferException e) {
              throw new IllegalStateException(e);
            }
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {}
        }).onNext(io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest.newBuilder()
            .setTypeUrl(endpoints).addResourceNames(SERVICE).build());

    provider.registerInstance(SERVICE, Instance.of("10.0.0.1", 8080));

    subscriber.await(Timing.seconds(10), Subscriber.hasPort(8080));
    await().atMost(Timing.seconds(10)).until(() -> xdsPorts.equals(Set.of(8080)));
    await().atMost(Timing.seconds(10)).until(() -> querier.getAllInstances(SERVICE).size() == 1);
    // Revisions come from the log: every member reports the same state at the same revision.
    long revision = subscriber.cached().revision();
    assertThat(Subscriber.cached(querier, SERVICE).revision()).isEqualTo(revision);

    provider.deregisterInstance(SERVICE, "10.0.0.1", 8080);
    subscriber.await(Timing.seconds(10), List::isEmpty);

    // Every member knows all three, where clients reach them, and one leader.
    for (int i = 0; i < cluster.size(); i++) {
      var members = cluster.members(i);
      assertThat(members.getWritable()).isTrue();
      assertThat(members.getMembersList()).extracting(m -> m.getClientAddress())
          .containsExactlyInAnyOrder(cluster.address(0), cluster.address(1), cluster.address(2));
      assertThat(members.getMembersList()).filteredOn(m -> m.getSelf()).hasSize(1);
    }
    await().atMost(Timing.seconds(5)).untilAsserted(() -> assertThat(cluster.members(1).getMembersList())
        .filteredOn(m -> m.getRole().equals("leader")).hasSize(1));

    // Each peer port listens on its member's --host only: reachable there, refused on another
    // address of this machine.
    for (int i = 0; i < cluster.size(); i++) {
      int peerPort = cluster.peerPorts.get(i);
      assertThat(connects(cluster.hosts.get(i), peerPort)).as("member %d's peer port on its host", i).isTrue();
      assertThat(connects("127.0.0.99", peerPort)).as("member %d's peer port on another address", i).isFalse();
    }
  }

  private static boolean connects(String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 2_000);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void killingTheMemberProvidersUseMovesThemWithoutAnySubscriberSeeingThemGo() throws Exception {
    cluster = local.start("--member-grace", "3s");
    // Providers prefer member 0 and move to member 1 when it dies.
    List<Integer> live = List.of(9001, 9002, 9003, 9004, 9005);
    for (int port : live) {
      client(cluster.servers(0), "provider-" + port).registerInstance(SERVICE, Instance.of("10.0.1.1", port));
    }
    // A provider whose process dies with member 0: its instance must go within the grace.
    ProviderProcess doomed = new ProviderProcess(cluster.address(0), SERVICE, "10.0.1.2", 9100);
    local.closing(doomed);
    doomed.awaitRegistered();

    List<List<Integer>> events = new CopyOnWriteArrayList<>();
    RosterClient watcher = client(cluster.address(2), "watcher");
    watcher.subscribe(SERVICE, (InstancesChangeEvent e) ->
        events.add(e.instances().stream().map(Instance::port).sorted().toList()));
    await().atMost(Timing.seconds(10)).until(() -> !events.isEmpty() && events.get(events.size() - 1).size() == 6);

    doomed.kill9();
    cluster.node(0).kill9();

    // Down after 3 s of silence, then a 3 s grace: the dead provider's instance goes.
    await().atMost(Timing.seconds(30)).until(() -> events.get(events.size() - 1).equals(live));
    assertThat(events).as("every state the subscriber saw has every live provider").allSatisfy(ports ->
        assertThat(ports).containsAll(live));
    Set<Integer> sizes = events.stream().map(List::size).collect(Collectors.toSet());
    assertThat(sizes).as("states seen: %s", events).containsOnly(6, 5);
  }

  @Test
  void stoppingAMemberMovesItsClientsBeforeTheyLeaveAndItRejoinsWithTheSameView() throws Exception {
    cluster = local.start();
    List<Integer> live = List.of(9201, 9202, 9203);
    for (int port : live) {
      client(cluster.servers(0), "provider-" + port).registerInstance(SERVICE, Instance.of("10.0.2.1", port));
    }
    List<List<Integer>> events = new CopyOnWriteArrayList<>();
    RosterClient watcher = client(cluster.address(2), "watcher");
    watcher.subscribe(SERVICE, (InstancesChangeEvent e) ->
        events.add(e.instances().stream().map(Instance::port).sorted().toList()));
    await().atMost(Timing.seconds(10)).until(() -> !events.isEmpty() && events.get(events.size() - 1).equals(live));
    // From here on: member 2 may have applied the last registration after the watcher's first
    // state (a commit needs only a majority), so the states before this one may lack it.
    events.clear();

    cluster.node(0).stop(); // SIGTERM: reconnect with a suggested member, make-before-break, then exit
    cluster.restart(0);
    RosterClient querier = client(cluster.address(0), "querier");
    await().atMost(Timing.seconds(10)).until(() -> querier.getAllInstances(SERVICE).stream()
        .map(Instance::port).sorted().toList().equals(live));

    assertThat(events).as("no state without a live provider").allSatisfy(ports -> assertThat(ports).isEqualTo(live));
  }

  @Test
  void aRestartedMemberLoadsItsSnapshotThenCatchesUpWithWhatItMissed() throws Exception {
    cluster = local.start("--snapshot-every", "20");
    RosterClient provider = client(cluster.address(0), "provider");
    provider.registerInstance(SERVICE, Instance.of("10.0.3.1", 1));
    cluster.node(2).stop();

    // Many snapshots' worth of entries while it is away.
    for (int port = 2; port <= 120; port++) {
      provider.registerInstance(SERVICE, Instance.of("10.0.3.1", port));
    }
    provider.deregisterInstance(SERVICE, "10.0.3.1", 1);

    cluster.restart(2);
    RosterClient querier = client(cluster.address(2), "querier");
    await().atMost(Timing.seconds(20)).until(() -> querier.getAllInstances(SERVICE).size() == 119);
    assertThat(querier.getAllInstances(SERVICE)).extracting(Instance::port).doesNotContain(1);
    assertThat(cluster.node(2).output()).contains("Loaded the snapshot");
    assertThat(Subscriber.cached(querier, SERVICE).revision())
        .isEqualTo(Subscriber.cached(client(cluster.address(1), "other"), SERVICE).revision());
  }

  @Test
  void aBurstOfRegistrationsOnOneStreamStopsAtTheConnectionsLimitWhileTheLogCatchesUp() throws Exception {
    cluster = local.start("--max-instances-per-connection", "50");
    io.grpc.ManagedChannel channel = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
        .forAddress(cluster.hosts.get(0), cluster.ports.get(0)).usePlaintext().build();
    local.closing(channel::shutdownNow);
    io.roster.server.testing.TestSession flooder = new io.roster.server.testing.TestSession(channel);
    local.closing(flooder);
    flooder.hello("flooder");
    // 200 registers without waiting for answers: none is applied yet when the later ones arrive.
    for (int port = 1; port <= 200; port++) {
      flooder.send(io.roster.proto.v1.ClientFrame.newBuilder().setRequestId("r-" + port)
          .setRegister(io.roster.proto.v1.RegisterInstance.newBuilder().setService(io.roster.server.testing.TestSession.key(SERVICE))
              .setInstance(io.roster.proto.v1.Instance.newBuilder().setIp("10.0.4.1").setPort(port))).build());
    }
    List<io.roster.proto.v1.Result> results = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      results.add(flooder.await(f -> f.hasResult() && f.getRequestId().startsWith("r-")).getResult());
    }
    assertThat(results).filteredOn(io.roster.proto.v1.Result::getOk).hasSize(50);
    assertThat(results).filteredOn(r -> !r.getOk()).allSatisfy(r -> assertThat(r.getMessage()).contains("limit: 50"));
    RosterClient querier = client(cluster.address(2), "querier");
    await().atMost(Timing.seconds(10)).until(() -> querier.getAllInstances(SERVICE).size() == 50);
  }

  @Test
  void clientsThatAllStartedOnOneMemberSpreadUntilEveryMemberHoldsAboutTheMean() throws Exception {
    // Sessions may be moved 2 s after they arrive (10 s by default): the rounds start sooner.
    cluster = local.start("--balance-settle", "2s");
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      ports.add(9300 + i);
      client(cluster.servers(0), "crowd-" + i).registerInstance(SERVICE, Instance.of("10.0.5.1", 9300 + i));
    }
    List<List<Integer>> events = new CopyOnWriteArrayList<>();
    RosterClient watcher = client(cluster.address(2), "watcher");
    watcher.subscribe(SERVICE, (InstancesChangeEvent e) ->
        events.add(e.instances().stream().map(Instance::port).sorted().toList()));
    await().atMost(Timing.seconds(10)).until(() -> !events.isEmpty() && events.get(events.size() - 1).size() == 30);

    // 31 sessions (30 + the watcher): the mean is about 10; within 20 % of it means 8..12 each.
    await().atMost(Timing.seconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
      var members = cluster.members(0).getMembersList();
      assertThat(members).allSatisfy(m -> assertThat(m.getSessions()).isBetween(8, 13));
    });
    assertThat(events).as("moving clients never takes their instances away").allSatisfy(p ->
        assertThat(p).isEqualTo(ports));
  }

  @Test
  void killingTheLeaderLetsTheOthersGoOnWriting() throws Exception {
    int httpPort = io.roster.server.testing.process.Ports.free(); // one number, each member on its own address
    cluster = local.start("--member-grace", "2s", "--http-port", Integer.toString(httpPort));
    int leader = -1;
    for (var m : cluster.members(0).getMembersList()) {
      if (m.getRole().equals("leader")) {
        leader = cluster.hosts.indexOf(m.getClientAddress().substring(0, m.getClientAddress().lastIndexOf(':')));
      }
    }
    assertThat(leader).as("a leader among %s", cluster.members(0)).isNotNegative();
    // The members' metrics agree on who leads, and each sees all three up.
    for (int i = 0; i < cluster.size(); i++) {
      String m = metrics(i, httpPort);
      assertThat(sample(m, "roster_cluster_leader")).as("member %d leads", i).isEqualTo(i == leader ? 1 : 0);
      assertThat(sample(m, "roster_cluster_has_leader")).isEqualTo(1);
      for (int k = 0; k < cluster.size(); k++) {
        assertThat(sample(m, "roster_cluster_member_up{member=\"" + cluster.id(k) + "\"}")).isEqualTo(1);
      }
    }
    int other = (leader + 1) % cluster.size();
    RosterClient provider = client(cluster.address(other), "provider");
    for (int port = 1; port <= 50; port++) {
      provider.registerInstance(SERVICE, Instance.of("10.0.6.1", port));
    }
    ProviderProcess doomed = new ProviderProcess(cluster.address(leader), SERVICE, "10.0.6.2", 1);
    local.closing(doomed);
    doomed.awaitRegistered();

    doomed.kill9();
    cluster.node(leader).kill9();
    long killed = System.nanoTime();
    // The two left elect a leader and take writes again; the dead member's owners go after the grace.
    provider.registerInstance(SERVICE, Instance.of("10.0.6.1", 51));
    long resumedMs = (System.nanoTime() - killed) / 1_000_000;
    RosterClient querier = client(cluster.address((leader + 2) % cluster.size()), "querier");
    await().atMost(Timing.seconds(30)).until(() -> querier.getAllInstances(SERVICE).size() == 51);
    System.out.println("writes resumed " + resumedMs + " ms after the leader's kill -9");

    // The survivors' metrics: one new leader, the change seen, the dead member down, writes timed.
    int[] survivors = {other, (leader + 2) % cluster.size()};
    String dead = cluster.id(leader);
    await().atMost(Timing.seconds(30)).untilAsserted(() -> {
      double leaders = 0;
      for (int i : survivors) {
        String m = metrics(i, httpPort);
        leaders += sample(m, "roster_cluster_leader");
        assertThat(sample(m, "roster_cluster_leader_changes_total")).isGreaterThanOrEqualTo(1);
        assertThat(sample(m, "roster_cluster_member_up{member=\"" + dead + "\"}")).isZero();
      }
      assertThat(leaders).isEqualTo(1);
    });
    assertThat(sample(metrics(other, httpPort), "roster_cluster_commit_seconds_count")).isPositive();
  }

  private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

  /** Member {@code i}'s {@code GET /metrics}, as text. */
  private String metrics(int i, int httpPort) throws Exception {
    return HTTP.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://" + cluster.hosts.get(i) + ":"
        + httpPort + "/metrics")).timeout(Timing.seconds(10)).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
  }

  /** The value of the sample written exactly as {@code series} (name and labels), or NaN when there is none. */
  private static double sample(String exposition, String series) {
    for (String line : exposition.split("\n", -1)) {
      if (line.startsWith(series + " ")) {
        return Double.parseDouble(line.substring(series.length() + 1).strip());
      }
    }
    return Double.NaN;
  }
}
