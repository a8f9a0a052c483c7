package io.roster.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Users, tokens and grants edited over real HTTP by an admin of every namespace (decision 98): the
 * auth file changes, the server takes the change in, and refusals change nothing.
 */
class IdentitiesApiTest {

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
        + pathAndQuery)).timeout(TestTime.seconds(20));
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

  private static String form(String... pairs) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < pairs.length; i += 2) {
      out.add(pairs[i] + "=" + URLEncoder.encode(pairs[i + 1], StandardCharsets.UTF_8));
    }
    return String.join("&", out);
  }

  private String login(String user, String password) throws Exception {
    Answer a = call("POST", "/nacos/v1/auth/users/login", form("username", user, "password", password), null);
    assertThat(a.status()).as(a.text()).isEqualTo(200);
    return a.body().get("accessToken").asText();
  }

  private List<String> identities(String token) throws Exception {
    List<String> out = new ArrayList<>();
    call("GET", "/roster/v1/admin/identities", null, token).data().get("identities").forEach(i ->
        out.add(i.get("name").asText() + " " + i.get("kind").asText() + " " + i.get("grants")));
    return out;
  }

  @Test
  void anAdminAddsAUserWhoLogsInResetsItsPasswordAndChangesItsGrants() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String admin = auth.token("ops", "admin@*");
    loopback.start(b -> b.authFile(auth.path()));

    Answer added = call("POST", "/roster/v1/admin/identities",
        form("kind", "user", "name", "alice", "password", "correct horse battery", "grants", "read@public"), admin);
    assertThat(added.status()).as(added.text()).isEqualTo(200);
    assertThat(added.data().get("member").asText()).isEqualTo(loopback.server().sessions().nodeId());
    assertThat(identities(admin)).containsExactly("alice user [\"read@public\"]", "ops token [\"admin@*\"]");
    assertThat(call("GET", "/roster/v1/admin/identities", null, admin).text()).doesNotContain("pbkdf2")
        .doesNotContain("sha256");

    String alice = login("alice", "correct horse battery");
    assertThat(call("GET", "/roster/v1/admin/permissions?namespaceId=public", null, alice).data().get("read")
        .asBoolean()).isTrue();

    Answer granted = call("POST", "/roster/v1/admin/identities/grants", form("name", "alice", "grant", "write@prod"), admin);
    assertThat(granted.status()).as(granted.text()).isEqualTo(200);
    assertThat(identities(admin)).contains("alice user [\"read@public\",\"write@prod\"]");

    Answer reset = call("PUT", "/roster/v1/admin/identities/password",
        form("name", "alice", "password", "another long secret"), admin);
    assertThat(reset.status()).as(reset.text()).isEqualTo(200);
    assertThat(call("GET", "/roster/v1/admin/permissions?namespaceId=public", null, alice).status())
        .as("the access token of the old password is refused").isEqualTo(403);
    login("alice", "another long secret");

    Answer token = call("POST", "/roster/v1/admin/identities", form("kind", "token", "name", "ci", "grants",
        "write@prod/orders-*"), admin);
    assertThat(token.status()).as(token.text()).isEqualTo(200);
    String ci = token.data().get("token").asText();
    assertThat(call("GET", "/roster/v1/admin/permissions?namespaceId=prod", null, ci).data().get("identity").asText())
        .isEqualTo("ci");
    assertThat(call("DELETE", "/roster/v1/admin/identities?name=ci", null, admin).status()).isEqualTo(200);
    assertThat(identities(admin)).extracting(s -> s.substring(0, s.indexOf(' '))).containsExactly("alice", "ops");
    Answer short_ = call("PUT", "/roster/v1/admin/identities/password", form("name", "alice", "password", "short"), admin);
    assertThat(short_.status()).isEqualTo(400);
    assertThat(short_.body().get("message").asText()).isEqualTo("password: 5 characters (expected: at least 12)");
  }

  @Test
  void aNonAdminIsRefusedAndNothingChanges() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String admin = auth.token("ops", "admin@*");
    String tenantAdmin = auth.token("tenant-ops", "admin@prod");
    loopback.start(b -> b.authFile(auth.path()));
    byte[] before = Files.readAllBytes(auth.path());

    Answer refused = call("POST", "/roster/v1/admin/identities",
        form("kind", "user", "name", "mallory", "password", "correct horse battery", "grants", "admin@*"), tenantAdmin);
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.body().get("message").asText()).contains("tenant-ops").contains("admin").contains("every namespace");
    assertThat(call("POST", "/roster/v1/admin/identities/grants", form("name", "tenant-ops", "grant", "admin@*"),
        tenantAdmin).status()).isEqualTo(403);
    assertThat(call("GET", "/roster/v1/admin/identities", null, tenantAdmin).status()).isEqualTo(403);
    assertThat(call("DELETE", "/roster/v1/admin/identities?name=ops", null, null).status()).isEqualTo(403);

    assertThat(Files.readAllBytes(auth.path())).isEqualTo(before);
    assertThat(identities(admin)).hasSize(2);
  }

  @Test
  void aReadOnlyAuthFileIsRefusedWith503AndNothingChanges() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String admin = auth.token("ops", "admin@*");
    loopback.start(b -> b.authFile(auth.path()));
    Files.setPosixFilePermissions(auth.path(), PosixFilePermissions.fromString("r--r--r--"));
    byte[] before = Files.readAllBytes(auth.path());

    Answer refused = call("POST", "/roster/v1/admin/identities", form("kind", "token", "name", "ci"), admin);
    assertThat(refused.status()).isEqualTo(503);
    assertThat(refused.body().get("message").asText()).isEqualTo("the auth file " + auth.path()
        + " is read-only; nothing was changed (edit it where it is managed, or make it writable)");
    assertThat(Files.readAllBytes(auth.path())).isEqualTo(before);
    try (var files = Files.list(dir)) {
      assertThat(files).containsExactly(auth.path());
    }
  }
}
