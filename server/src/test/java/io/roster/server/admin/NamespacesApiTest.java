package io.roster.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Namespaces over real HTTP (decision 97): Roster's {@code /roster/v1/admin/namespaces} and Nacos's
 * console shape {@code /nacos/v1/console/namespaces}, their refusals, and permissions.
 */
class NamespacesApiTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  private record Answer(int status, String text) {
    JsonNode body() throws Exception {
      return JsonEnvelope.JSON.readTree(text);
    }

    JsonNode data() throws Exception {
      return body().get("data");
    }
  }

  private Answer call(String method, String pathAndQuery, String form, String token) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + pathAndQuery)).timeout(TestTime.seconds(10));
    if (form != null) {
      b.header("Content-Type", "application/x-www-form-urlencoded");
    }
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    b.method(method, form == null ? BodyPublishers.noBody() : BodyPublishers.ofString(form));
    var r = http.send(b.build(), BodyHandlers.ofString());
    return new Answer(r.statusCode(), r.body());
  }

  private static List<String> ids(JsonNode list) {
    List<String> ids = new ArrayList<>();
    list.forEach(n -> ids.add(n.get("namespace").asText()));
    return ids;
  }

  @Test
  void namespacesAreCreatedListedWithTheirCountsEditedAndDeletedOnlyWhenEmpty() throws Exception {
    loopback.start();
    Answer created = call("POST", "/roster/v1/admin/namespaces",
        "namespaceId=tenant-a&namespaceName=Tenant+A&namespaceDesc=first", null);
    assertThat(created.status()).as(created.text()).isEqualTo(200);
    assertThat(created.data().get("name").asText()).isEqualTo("Tenant A");
    assertThat(created.data().get("created").asBoolean()).isTrue();

    JsonNode list = call("GET", "/roster/v1/admin/namespaces", null, null).data();
    assertThat(ids(list)).containsExactly("public", "tenant-a");
    assertThat(list.get(1).get("serviceCount").asInt()).isZero();
    assertThat(list.get(1).get("description").asText()).isEqualTo("first");

    Answer again = call("POST", "/roster/v1/admin/namespaces", "namespaceId=tenant-a&namespaceName=x", null);
    assertThat(again.status()).isEqualTo(409);
    assertThat(again.body().get("message").asText()).isEqualTo("namespaceId: \"tenant-a\" already exists");
    Answer bad = call("POST", "/roster/v1/admin/namespaces", "namespaceId=tenant+a", null);
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().get("message").asText())
        .isEqualTo("namespaceId: \"tenant a\" (expected: 1..128 characters of [A-Za-z0-9_.:-])");

    Answer edited = call("PUT", "/roster/v1/admin/namespaces", "namespaceId=tenant-a&namespaceDesc=edited", null);
    assertThat(edited.status()).as(edited.text()).isEqualTo(200);
    assertThat(edited.data().get("name").asText()).as("kept").isEqualTo("Tenant A");
    assertThat(edited.data().get("description").asText()).isEqualTo("edited");

    String instance = "/nacos/v1/ns/instance?namespaceId=tenant-a&serviceName=orders&ip=10.0.0.1&port=80&ephemeral=false";
    assertThat(call("POST", instance, null, null).status()).isEqualTo(200);
    Answer refused = call("DELETE", "/roster/v1/admin/namespaces?namespaceId=tenant-a", null, null);
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.body().get("message").asText()).isEqualTo("namespaceId: \"tenant-a\" is not empty: it has "
        + "1 services and 1 instances; only an empty namespace can be deleted");
    JsonNode after = call("GET", "/roster/v1/admin/namespaces", null, null).data().get(1);
    assertThat(after.get("namespace").asText()).isEqualTo("tenant-a");
    assertThat(after.get("description").asText()).as("nothing changed").isEqualTo("edited");
    assertThat(after.get("instanceCount").asInt()).isEqualTo(1);
    assertThat(call("DELETE", "/roster/v1/admin/namespaces?namespaceId=public", null, null).status()).isEqualTo(409);

    assertThat(call("DELETE", instance, null, null).status()).isEqualTo(200);
    Answer deleted = call("DELETE", "/roster/v1/admin/namespaces?namespaceId=tenant-a", null, null);
    assertThat(deleted.status()).as(deleted.text()).isEqualTo(200);
    assertThat(ids(call("GET", "/roster/v1/admin/namespaces", null, null).data())).containsExactly("public");
    assertThat(call("DELETE", "/roster/v1/admin/namespaces?namespaceId=tenant-a", null, null).status()).isEqualTo(404);
  }

  @Test
  void nacosConsoleShapeCreatesListsEditsAndDeletes() throws Exception {
    loopback.start();
    String path = "/nacos/v1/console/namespaces";
    Answer created = call("POST", path, "customNamespaceId=dev&namespaceName=Dev&namespaceDesc=d", null);
    assertThat(created.status()).as(created.text()).isEqualTo(200);
    assertThat(created.text()).isEqualTo("true");
    assertThat(call("GET", path + "?checkNamespaceIdExist=true&customNamespaceId=dev", null, null).text()).isEqualTo("true");
    assertThat(call("GET", path + "?checkNamespaceIdExist=true&customNamespaceId=qa", null, null).text()).isEqualTo("false");

    JsonNode list = call("GET", path, null, null).body();
    assertThat(list.get("code").asInt()).isEqualTo(200);
    JsonNode dev = list.get("data").get(0);
    assertThat(dev.get("namespace").asText()).isEqualTo("dev");
    assertThat(dev.get("namespaceShowName").asText()).isEqualTo("Dev");
    assertThat(dev.get("namespaceDesc").asText()).isEqualTo("d");
    assertThat(dev.get("type").asInt()).isEqualTo(2);
    assertThat(list.get("data").get(1).get("namespace").asText()).isEqualTo("public");
    assertThat(list.get("data").get(1).get("type").asInt()).isZero();

    assertThat(call("PUT", path, "namespace=dev&namespaceShowName=Development&namespaceDesc=e", null).text())
        .isEqualTo("true");
    assertThat(call("GET", path + "?show=all&namespaceId=dev", null, null).body().get("namespaceShowName").asText())
        .isEqualTo("Development");
    Answer generated = call("POST", path, "namespaceName=Generated", null);
    assertThat(generated.status()).isEqualTo(200);
    assertThat(call("GET", path, null, null).body().get("data")).hasSize(3);
    assertThat(call("DELETE", path + "?namespaceId=dev", null, null).text()).isEqualTo("true");
    Answer refused = call("DELETE", path + "?namespaceId=public", null, null);
    assertThat(refused.status()).isEqualTo(409);
    assertThat(refused.text()).contains("cannot be deleted");
  }

  @Test
  void withAuthOnlyAnAdminOfTheNamespaceChangesItAndARefusalChangesNothing() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String admin = auth.token("ops", "admin@*");
    String tenantAdmin = auth.token("tenant-ops", "admin@tenant-a");
    String reader = auth.token("viewer", "read@public");
    loopback.start(b -> b.authFile(auth.path()));

    Answer refused = call("POST", "/roster/v1/admin/namespaces", "namespaceId=tenant-a&namespaceName=A", reader);
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.body().get("message").asText()).contains("viewer").contains("admin").contains("tenant-a");
    assertThat(call("POST", "/nacos/v1/console/namespaces", "customNamespaceId=tenant-a&namespaceName=A", reader)
        .status()).isEqualTo(403);
    assertThat(call("POST", "/roster/v1/admin/namespaces", "namespaceId=tenant-a&namespaceName=A", null).status())
        .isEqualTo(403);
    assertThat(ids(call("GET", "/roster/v1/admin/namespaces", null, admin).data())).containsExactly("public");

    assertThat(call("POST", "/roster/v1/admin/namespaces", "namespaceId=tenant-a&namespaceName=A", tenantAdmin)
        .status()).isEqualTo(200);
    assertThat(call("DELETE", "/roster/v1/admin/namespaces?namespaceId=tenant-a", null, reader).status()).isEqualTo(403);
    assertThat(ids(call("GET", "/roster/v1/admin/namespaces", null, admin).data())).containsExactly("public", "tenant-a");
    assertThat(ids(call("GET", "/roster/v1/admin/namespaces", null, reader).data())).as("what it may read")
        .containsExactly("public");
  }
}
