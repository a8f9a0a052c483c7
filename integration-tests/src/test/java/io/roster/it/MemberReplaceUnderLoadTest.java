package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.DeregisterInstanceRequest;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.ServerLauncher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Members changed at runtime as docs/cluster.md ("Changing the members") says, in both entry
 * forms, with peer TLS on and clients writing the whole time: three members listed by id
 * ({@code n1=127.0.0.1:P1,...}); a fourth, started with all members listed, waits serving
 * nothing until it is added ({@code add=n4=host:port}); a member stopped is replaced by one
 * given as {@code host:port} in one change; the fourth is stopped and removed: three again. A
 * member that is not started is refused at once, and nothing changes. Each change's time is
 * printed (docs/benchmarks.md).
 */
class MemberReplaceUnderLoadTest {

  private static final ServiceKey LOAD = ServiceKey.newBuilder().setName("members-load").build();
  private static final ServiceKey DB = ServiceKey.newBuilder().setName("members-db").build();
  private static final int INSTANCES = 30;
  /** The bound docs/cluster.md gives a change of members that cannot be made (a member not started). */
  private static final Duration REFUSED_WITHIN = Duration.ofSeconds(10);
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();
  private final AtomicBoolean loading = new AtomicBoolean(true);
  private final AtomicLong written = new AtomicLong();
  private final List<Thread> writers = new ArrayList<>();
  private LocalCluster cluster;

  @AfterEach
  void close() throws Exception {
    loading.set(false);
    for (Thread t : writers) {
      t.join(Timing.seconds(30).toMillis());
    }
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private synchronized ManagedChannel channel(int member) {
    ManagedChannel c = NettyChannelBuilder.forTarget(cluster.address(member)).usePlaintext().build();
    channels.add(c);
    return c;
  }

  private RegistryGrpc.RegistryBlockingStub registry(int member) {
    return RegistryGrpc.newBlockingStub(channel(member)).withDeadlineAfter(Timing.seconds(10).toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private record Answer(int status, JsonNode json, String body) {}

  private Answer send(int member, String method, String path) throws Exception {
    var r = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.node(member).host + ":"
        + cluster.node(member).httpPort() + path)).timeout(Timing.seconds(120))
        .method(method, HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    return new Answer(r.statusCode(), r.body().startsWith("{") ? json.readTree(r.body()) : null, r.body());
  }

  private Answer members(int member, String method, String query) throws Exception {
    return send(member, method, "/roster/v1/admin/members" + query);
  }

  private List<String> memberIds(int member) throws Exception {
    List<String> ids = new ArrayList<>();
    members(member, "GET", "").json().get("data").get("members").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  /**
   * A client of {@code member} registering and deregistering its own instances as fast as the
   * member answers, until the test ends; refusals (a member changing, a leader moving) are
   * counted as nothing and tried again.
   */
  private void writeTo(int member, int client) {
    RegistryGrpc.RegistryBlockingStub stub = RegistryGrpc.newBlockingStub(channel(member));
    Thread t = new Thread(() -> {
      for (int i = 0; loading.get(); i = (i + 1) % 20) {
        Instance instance = Instance.newBuilder().setIp("10.7." + client + "." + (i + 1)).setPort(80).build();
        try {
          var s = stub.withDeadlineAfter(5, TimeUnit.SECONDS);
          s.registerInstance(RegisterInstanceRequest.newBuilder().setService(LOAD).setInstance(instance).build());
          s.deregisterInstance(DeregisterInstanceRequest.newBuilder().setService(LOAD).setIp(instance.getIp())
              .setPort(instance.getPort()).build());
          written.addAndGet(2);
        } catch (StatusRuntimeException refused) {
          // Tried again with the next instance.
        }
      }
    }, "load-" + client);
    t.setDaemon(true);
    t.start();
    writers.add(t);
  }

  /** Waits until the load has written {@code more} entries from now. */
  private void loadGoesOn(int more) {
    long from = written.get();
    await().atMost(Timing.seconds(30)).until(() -> written.get() >= from + more);
  }

  private void assertNotServing(int member, String why) throws Exception {
    Answer list = send(member, "GET", "/nacos/v1/ns/instance/list?serviceName=" + DB.getName());
    assertThat(list.status()).as(list.body()).isEqualTo(503);
    assertThat(list.body()).contains(why);
    assertThat(send(member, "GET", "/nacos/v1/ns/operator/metrics").body()).contains("\"DOWN\"");
    assertThat(HealthGrpc.newBlockingStub(channel(member)).withDeadlineAfter(5, TimeUnit.SECONDS)
        .check(HealthCheckRequest.getDefaultInstance()).getStatus()).isEqualTo(ServingStatus.NOT_SERVING);
  }

  private int instances(int member) {
    return registry(member).getService(GetServiceRequest.newBuilder().setService(DB).build()).getInstanceCount();
  }

  @Test
  void threeMembersBecomeFourThenOneIsReplacedThenThreeUnderAWriteLoad() throws Exception {
    // Members n1..n4 by id; the fifth by its host:peerPort. A snapshot every 50 entries: a member
    // added catches up from the leader's snapshot, not the log alone.
    cluster = LocalCluster.builder(ServerLauncher.forTests()).size(5).spares(2).named(4)
        .flags("--snapshot-every", "50").start();
    for (int i = 1; i <= INSTANCES; i++) {
      registry(0).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
          .setInstance(Instance.newBuilder().setIp("10.8.0." + i).setPort(5432)).build());
    }
    writeTo(0, 1);
    writeTo(2, 2);
    loadGoesOn(50);

    // A member not started yet: refused at once, naming it, and nothing changes.
    long asked = System.nanoTime();
    Answer absent = members(0, "POST", "?add=" + cluster.entry(3));
    Duration refusedIn = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(absent.status()).as(absent.body()).isEqualTo(503);
    assertThat(absent.body()).contains(cluster.entry(3)).contains("no member answers").contains("nothing changed");
    assertThat(refusedIn).isLessThan(REFUSED_WITHIN);
    assertThat(memberIds(0)).containsExactlyInAnyOrder("n1", "n2", "n3");

    // 3 -> 4: n4 starts listing all five, waits serving nothing, then is added as n4=host:port.
    cluster.launchSpare(3).awaitListening(Timing.seconds(60));
    await().atMost(Timing.seconds(30)).ignoreExceptions().untilAsserted(() ->
        assertNotServing(3, "has not joined the group"));
    asked = System.nanoTime();
    Answer added = members(0, "POST", "?add=" + cluster.entry(3));
    Duration addAnswered = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(added.status()).as(added.body()).isEqualTo(200);
    cluster.node(3).awaitServing(Timing.seconds(60));
    Duration addServing = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(instances(3)).isEqualTo(INSTANCES);
    for (int m = 0; m < 4; m++) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() ->
          assertThat(memberIds(member)).containsExactlyInAnyOrder("n1", "n2", "n3", "n4"));
    }
    loadGoesOn(50);

    // Replace: n2 stops; the fifth, started by host:peerPort, takes its place in one change.
    cluster.node(1).stop();
    String fifth = cluster.entry(4);
    cluster.launchSpare(4).awaitListening(Timing.seconds(60));
    await().atMost(Timing.seconds(30)).ignoreExceptions().untilAsserted(() ->
        assertNotServing(4, "has not joined the group"));
    asked = System.nanoTime();
    Answer replaced = members(0, "POST", "?add=" + fifth + "&remove=n2");
    Duration replaceAnswered = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(replaced.status()).as(replaced.body()).isEqualTo(200);
    cluster.node(4).awaitServing(Timing.seconds(60));
    Duration replaceServing = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(instances(4)).isEqualTo(INSTANCES);
    for (int m : new int[] {0, 2, 3, 4}) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() ->
          assertThat(memberIds(member)).containsExactlyInAnyOrder("n1", "n3", "n4", fifth));
    }
    loadGoesOn(50);

    // 4 -> 3: n4 stops (its clients move), then is removed.
    cluster.node(3).stop();
    asked = System.nanoTime();
    Answer removed = members(4, "POST", "?remove=n4");
    Duration removeAnswered = Duration.ofNanos(System.nanoTime() - asked);
    assertThat(removed.status()).as(removed.body()).isEqualTo(200);
    for (int m : new int[] {0, 2, 4}) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() ->
          assertThat(memberIds(member)).containsExactlyInAnyOrder("n1", "n3", fifth));
    }
    loadGoesOn(50);

    // The three agree: a write through the replacement is read on the others.
    await().atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class).untilAsserted(() ->
        registry(4).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
            .setInstance(Instance.newBuilder().setIp("10.8.1.1").setPort(5432)).build()));
    for (int m : new int[] {0, 2, 4}) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(instances(member)).isEqualTo(INSTANCES + 1));
    }
    System.out.printf("MEMBERS refused_ms=%d add_answered_ms=%d add_serving_ms=%d replace_answered_ms=%d "
        + "replace_serving_ms=%d remove_answered_ms=%d written=%d%n", refusedIn.toMillis(), addAnswered.toMillis(),
        addServing.toMillis(), replaceAnswered.toMillis(), replaceServing.toMillis(), removeAnswered.toMillis(),
        written.get());
  }
}
