package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.client.RosterClient;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.Ports;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Heartbeat instances in a three-member cluster (decision 39): registered over HTTP on one
 * member, replicated to every member through the log; their expiry, decided by the member that
 * holds the lease, reaches a subscriber of another member as unhealthy, then gone. An operator's
 * {@code enabled=false} through a third member holds everywhere.
 */
class NacosHttpClusterTest {

  private static final String SERVICE = "http-cluster-svc";
  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();
  private LocalCluster cluster;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Timing.seconds(10)).build();
  /** Every member's HTTP port: the same number, each on its own loopback address. */
  private final int httpPort = Ports.free();

  private String curl(int member, String method, String pathAndQuery) throws Exception {
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + cluster.hosts.get(member) + ":" + httpPort
        + pathAndQuery)).timeout(Timing.seconds(10)).method(method, BodyPublishers.noBody()).build();
    var response = http.send(r, BodyHandlers.ofString());
    assertThat(response.statusCode()).as(method + " " + pathAndQuery + ": " + response.body()).isEqualTo(200);
    return response.body();
  }

  @Test
  void aHeartbeatInstanceIsReplicatedAndItsExpiryReachesEveryMember() throws Exception {
    cluster = local.start("--http-port", Integer.toString(httpPort));
    RosterClient sdk = local.closing(
        RosterClient.builder().serverAddresses(cluster.address(2)).randomStart(false).clientName("sdk").build());
    Subscriber subscriber = new Subscriber(sdk, SERVICE);

    String metadata = URLEncoder.encode("{\"preserved.heart.beat.interval\":\"500\","
        + "\"preserved.heart.beat.timeout\":\"2000\",\"preserved.ip.delete.timeout\":\"4000\"}", StandardCharsets.UTF_8);
    curl(0, "POST", "/nacos/v1/ns/instance?serviceName=" + SERVICE + "&ip=10.3.0.1&port=7000&metadata=" + metadata);
    await().atMost(Timing.seconds(10)).untilAsserted(() ->
        assertThat(curl(1, "GET", "/nacos/v1/ns/instance/list?serviceName=" + SERVICE)).contains("\"ip\":\"10.3.0.1\""));
    subscriber.await(Timing.seconds(10), list -> list.size() == 1 && list.get(0).healthy());

    // Only member 0 holds the lease: a beat through member 1 is told to register again.
    String beat = "/nacos/v1/ns/instance/beat?serviceName=" + SERVICE + "&ip=10.3.0.1&port=7000";
    assertThat(curl(1, "PUT", beat)).contains("\"code\":20404");
    assertThat(curl(0, "PUT", beat)).contains("\"code\":10200").contains("\"clientBeatInterval\":500");
    // An operator's hold through member 1 is everyone's, and ends everywhere (beats keep it alive meanwhile).
    curl(1, "PUT", "/nacos/v1/ns/instance?serviceName=" + SERVICE + "&ip=10.3.0.1&port=7000&enabled=false");
    subscriber.await(Timing.seconds(10), list -> list.isEmpty());
    curl(0, "PUT", beat);
    curl(1, "PUT", "/nacos/v1/ns/instance?serviceName=" + SERVICE + "&ip=10.3.0.1&port=7000&enabled=true");
    subscriber.await(Timing.seconds(10), list -> list.size() == 1);
    curl(0, "PUT", beat);

    // No beats: member 0 marks it unhealthy, then removes it; member 2's subscriber sees both.
    subscriber.await(Timing.seconds(10), list -> list.size() == 1 && !list.get(0).healthy());
    subscriber.await(Timing.seconds(10), list -> list.isEmpty());
    await().atMost(Timing.seconds(10)).untilAsserted(() ->
        assertThat(curl(1, "GET", "/nacos/v1/ns/instance/list?serviceName=" + SERVICE)).contains("\"hosts\":[]"));
  }
}
