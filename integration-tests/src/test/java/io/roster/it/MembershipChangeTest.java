package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.ServerLauncher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Members changed at runtime (docs/cluster.md, "Changing the members"): a fourth process joins a
 * running three-member cluster through the admin API, catches up from the leader's snapshot with
 * what was registered before it came, and serves; then a member is stopped and removed, and the three left take writes and
 * list only each other.
 */
class MembershipChangeTest {

  private static final ServiceKey DB = ServiceKey.newBuilder().setName("members-db").build();
  private static final int INSTANCES = 50;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final HttpClient http = HttpClient.newHttpClient();
  private LocalCluster cluster;

  @AfterEach
  void close() throws Exception {
    for (ManagedChannel c : channels) {
      c.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private RegistryGrpc.RegistryBlockingStub registry(int member) {
    ManagedChannel c = NettyChannelBuilder.forTarget(cluster.address(member)).usePlaintext().build();
    channels.add(c);
    return RegistryGrpc.newBlockingStub(c).withDeadlineAfter(Timing.seconds(10).toMillis(), TimeUnit.MILLISECONDS);
  }

  private record Answer(int status, JsonNode json, String body) {}

  private Answer admin(int member, String method, String query) throws Exception {
    var r = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.node(member).host + ":"
        + cluster.node(member).httpPort() + "/roster/v1/admin/members" + query)).timeout(Timing.seconds(90))
        .method(method, HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    JsonNode json = r.body().startsWith("{") ? new ObjectMapper().readTree(r.body()) : null;
    return new Answer(r.statusCode(), json, r.body());
  }

  private List<String> memberIds(int member) throws Exception {
    List<String> ids = new ArrayList<>();
    admin(member, "GET", "").json().get("data").get("members").forEach(m -> ids.add(m.get("id").asText()));
    return ids;
  }

  @Test
  void aMemberJoinsCatchesUpAndServesThenAnotherIsRemoved() throws Exception {
    // A snapshot every 10 entries, and the log before it dropped: the new member must install the
    // leader's snapshot to catch up, the log alone cannot bring it there.
    cluster = LocalCluster.builder(ServerLauncher.forTests()).size(4).spares(1).flags("--snapshot-every", "10")
        .start();
    for (int i = 1; i <= INSTANCES; i++) {
      registry(0).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
          .setInstance(Instance.newBuilder().setIp("10.8.0." + i).setPort(5432)).build());
    }
    registry(0).updateService(UpdateServiceRequest.newBuilder().setService(DB).setProtectThreshold(0.5).build());
    assertThat(memberIds(0)).hasSize(3);

    String fourth = cluster.hosts.get(3) + ":" + cluster.peerPorts.get(3);
    // Started, it listens and waits, serving nothing, until the group takes it.
    cluster.launchSpare(3).awaitListening(Timing.seconds(60));
    await().atMost(Timing.seconds(30)).ignoreExceptions().untilAsserted(() ->
        assertThat(admin(3, "GET", "").body()).contains("has not joined the group"));
    Answer added = admin(0, "POST", "?add=" + fourth);
    assertThat(added.status()).as(added.body()).isEqualTo(200);
    cluster.node(3).awaitServing(Timing.seconds(60));
    assertThat(java.nio.file.Files.readString(cluster.node(3).log)).contains("Loaded the snapshot");
    RegistryGrpc.RegistryBlockingStub joined = registry(3);
    await().atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class).untilAsserted(() ->
        assertThat(joined.getService(GetServiceRequest.newBuilder().setService(DB).build()).getInstanceCount())
            .isEqualTo(INSTANCES));
    assertThat(registry(3).getService(GetServiceRequest.newBuilder().setService(DB).build()).getProtectThreshold())
        .isEqualTo(0.5);
    for (int m = 0; m < 4; m++) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(memberIds(member)).contains(fourth)
          .hasSize(4));
    }

    // Bad changes are refused, naming the entry, and change nothing.
    Answer again = admin(1, "POST", "?add=" + fourth);
    assertThat(again.status()).isEqualTo(400);
    assertThat(again.body()).contains("add: \\\"" + fourth + "\\\"");
    assertThat(admin(1, "POST", "?remove=nobody:1").body()).contains("remove: \\\"nobody:1\\\"");

    // A member leaves: stopped, then removed; the others take writes and list only each other.
    int leaving = cluster.leader() == 1 ? 2 : 1;
    String leavingId = cluster.id(leaving);
    cluster.node(leaving).stop();
    int through = leaving == 1 ? 2 : 1;
    Answer removed = admin(through, "POST", "?remove=" + leavingId);
    assertThat(removed.status()).as(removed.body()).isEqualTo(200);
    for (int m : new int[] {0, through, 3}) {
      int member = m;
      await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(memberIds(member))
          .doesNotContain(leavingId).hasSize(3));
    }
    await().atMost(Timing.seconds(30)).ignoreException(StatusRuntimeException.class).untilAsserted(() ->
        registry(3).registerInstance(RegisterInstanceRequest.newBuilder().setService(DB)
            .setInstance(Instance.newBuilder().setIp("10.8.1.1").setPort(5432)).build()));
    for (int m : new int[] {0, through}) {
      RegistryGrpc.RegistryBlockingStub stub = registry(m);
      await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(stub.getService(
          GetServiceRequest.newBuilder().setService(DB).build()).getInstanceCount()).isEqualTo(INSTANCES + 1));
    }
    // The log's member list agrees: the persistent instances' probes are shared by the three left,
    // none left to the member that went.
    await().atMost(Timing.seconds(10)).untilAsserted(() -> assertThat(Scrape.value(cluster.node(0),
        "roster_probe_targets") + Scrape.value(cluster.node(through), "roster_probe_targets")
        + Scrape.value(cluster.node(3), "roster_probe_targets")).isEqualTo(INSTANCES + 1));
  }
}
