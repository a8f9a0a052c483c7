package io.roster.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.roster.server.testing.process.LocalCluster;
import io.roster.server.testing.process.Ports;
import io.roster.server.testing.process.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Created namespaces are durable and replicated (decision 97): a standalone server process keeps
 * them across a restart, and a namespace created on one member of a cluster is seen by the others,
 * whose refusal to delete it while it has an instance changes nothing anywhere.
 */
class NamespacesTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String NAMESPACES = "/roster/v1/admin/namespaces";

  @TempDir Path data;

  @RegisterExtension
  final LocalClusterExtension local = new LocalClusterExtension();

  private final Closer closing = new Closer();
  private final HttpClient http = HttpClient.newHttpClient();

  @AfterEach
  void stop() {
    closing.close();
  }

  private record Answer(int status, JsonNode body) {}

  /** @param at a server's HTTP address, host:port */
  private Answer call(String at, String method, String pathAndQuery) throws Exception {
    var r = http.send(HttpRequest.newBuilder(URI.create("http://" + at + pathAndQuery))
        .timeout(Timing.seconds(15)).method(method, HttpRequest.BodyPublishers.noBody()).build(), BodyHandlers.ofString());
    String body = r.body();
    // The Nacos v1 API answers a registration with the word ok, the admin API with JSON.
    return new Answer(r.statusCode(), body.startsWith("{") || body.startsWith("[") ? JSON.readTree(body)
        : JSON.getNodeFactory().textNode(body));
  }

  /** The HTTP address of {@code s}: its host, its HTTP port. */
  private static String http(ServerProcess s) {
    String address = s.address();
    return address.substring(0, address.lastIndexOf(':') + 1) + s.httpPort();
  }

  private List<String> namespaces(String at) throws Exception {
    List<String> out = new ArrayList<>();
    call(at, "GET", NAMESPACES).body().get("data").forEach(n -> out.add(n.get("namespace").asText() + " "
        + n.get("name").asText() + " " + n.get("description").asText() + " " + n.get("instanceCount").asInt()));
    return out;
  }

  @Test
  void aStandaloneServerKeepsItsNamespacesAcrossARestart() throws Exception {
    int port = Ports.free();
    int httpPort = Ports.free();
    String at = "127.0.0.1:" + httpPort;
    String[] flags = {"--data-dir", data.toString(), "--http-port", Integer.toString(httpPort)};
    ServerProcess server = closing.add(ServerProcess.start("127.0.0.1", port, flags));
    assertThat(call(at, "POST", NAMESPACES + "?namespaceId=tenant-a&namespaceName=A&namespaceDesc=first").status())
        .isEqualTo(200);
    assertThat(call(at, "POST", "/nacos/v1/console/namespaces?customNamespaceId=dev&namespaceName=Dev").status())
        .isEqualTo(200);
    assertThat(call(at, "PUT", NAMESPACES + "?namespaceId=tenant-a&namespaceDesc=edited").status()).isEqualTo(200);
    assertThat(call(at, "POST", NAMESPACES + "?namespaceId=gone&namespaceName=G").status()).isEqualTo(200);
    assertThat(call(at, "DELETE", NAMESPACES + "?namespaceId=gone").status()).isEqualTo(200);

    server.stop();
    closing.add(ServerProcess.start("127.0.0.1", port, flags));

    assertThat(namespaces(at)).containsExactly("dev Dev  0", "public public The default namespace 0",
        "tenant-a A edited 0");
  }

  @Test
  void aNamespaceCreatedOnOneMemberIsSeenByTheOthersAndANonEmptyOneIsNotDeletedAnywhere() throws Exception {
    LocalCluster cluster = local.start();
    String first = http(cluster.node(0));
    Answer created = call(first, "POST", NAMESPACES + "?namespaceId=tenant-a&namespaceName=A&namespaceDesc=first");
    assertThat(created.status()).as(created.body().toString()).isEqualTo(200);
    for (int m = 1; m < cluster.size(); m++) {
      String member = http(cluster.node(m));
      await().atMost(Timing.seconds(10)).untilAsserted(() ->
          assertThat(namespaces(member)).contains("tenant-a A first 0"));
    }

    // A persistent instance in it, through the second member; the third refuses to delete it.
    String instance = "/nacos/v1/ns/instance?namespaceId=tenant-a&serviceName=orders-db&ip=10.0.0.9&port=5432"
        + "&ephemeral=false";
    assertThat(call(http(cluster.node(1)), "POST", instance).status()).isEqualTo(200);
    String third = http(cluster.node(2));
    await().atMost(Timing.seconds(10)).untilAsserted(() ->
        assertThat(namespaces(third)).contains("tenant-a A first 1"));
    Answer refused = call(third, "DELETE", NAMESPACES + "?namespaceId=tenant-a");
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.body().get("message").asText()).isEqualTo("namespaceId: \"tenant-a\" is not empty: it has 1 "
        + "services and 1 instances; only an empty namespace can be deleted");
    for (int m = 0; m < cluster.size(); m++) {
      assertThat(namespaces(http(cluster.node(m)))).as("member " + m).contains("tenant-a A first 1");
    }
  }
}
