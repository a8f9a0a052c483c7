package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import com.fasterxml.jackson.databind.JsonNode;
import io.roster.server.auth.Authenticator;
import io.roster.server.testing.AuditLines;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.ShiftedClock;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * The HTTP port with auth on, over a real loopback socket: every route refuses a caller without
 * a token, with a wrong, an expired or a removed one, a read-only identity asking to change
 * something and an identity of another namespace, each with 403 naming the permission and the
 * namespace, and nothing changed (an admin's query says so); the same routes work for the
 * identities allowed, a Nacos subscriber is pushed, and Nacos's logins answer as the clients
 * expect.
 */
class NacosAuthHttpTest {

  private static final String PASSWORD = "correct horse battery";
  private static final Duration TTL = Duration.ofMinutes(1);
  private static final Duration WAIT = TestTime.seconds(10);
  /** The logger the log-level route is asked to change (one of the test's own, so that no other test sees it). */
  private static final String LOGGER = "io.roster.server.nacos.auth-probe";

  static {
    LoggerFactory.getLogger(LOGGER); // the route changes only loggers that exist
  }

  private final ShiftedClock clock = new ShiftedClock();

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest().scheduler(clock);

  @TempDir Path dir;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();
  private AuthFiles auth;
  private String admin;
  private String writer;
  private String reader;
  private String devWriter;

  /** One request of each route, and what it needs. */
  private record Route(String method, String path, String form, String permission, String where) {}

  private static final List<Route> ROUTES = List.of(
      new Route("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", "write", "public"),
      new Route("DELETE", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080", "write", "public"),
      new Route("PUT", "/nacos/v1/ns/instance/beat", "serviceName=orders&beat="
          + enc("{\"ip\":\"10.0.0.3\",\"port\":8080,\"serviceName\":\"orders\"}"), "write", "public"),
      new Route("PUT", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080&enabled=false&weight=7",
          "admin", "public"),
      new Route("GET", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080", "read", "public"),
      new Route("GET", "/nacos/v1/ns/instance/list", "serviceName=orders", "read", "public"),
      new Route("GET", "/nacos/v1/ns/service/list", "pageNo=1&pageSize=10", "read", "public"),
      new Route("GET", "/nacos/v1/ns/operator/metrics", "onlyStatus=false", "admin", "every namespace"),
      new Route("PUT", "/nacos/v1/ns/operator/log", "logName=" + LOGGER + "&logLevel=TRACE", "admin",
          "every namespace"));

  private record Answer(int status, String body) {
    JsonNode json() {
      try {
        return NacosMapping.JSON.readTree(body);
      } catch (Exception e) {
        throw new AssertionError("not JSON: " + body, e);
      }
    }
  }

  @BeforeEach
  void setUp() {
    auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", PASSWORD, "admin@*")
        .user("orders-app", PASSWORD, "write@public/orders");
    admin = auth.token("admin", "admin@*");
    writer = auth.token("writer", "write@public");
    reader = auth.token("reader", "read@*");
    devWriter = auth.token("dev-writer", "admin@dev");
    loopback.start(b -> b.authFile(auth.path()).tokenTtl(TTL));
    assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080", admin).status())
        .isEqualTo(200);
  }

  @AfterEach
  void tearDown() {
    loopback.close();
    clock.close();
  }

  @Test
  void everyRouteRefusesACallerWithoutAToken() {
    refusedEverywhere(null, "accessToken: missing");
  }

  @Test
  void everyRouteRefusesAWrongToken() {
    refusedEverywhere("rst_not-a-token-of-this-server", "a token the auth file does not list");
  }

  @Test
  void everyRouteRefusesAnExpiredAccessToken() {
    String token = login(NacosLogin.V1, "ops").get("accessToken").asText();
    assertThat(call("GET", "/nacos/v1/ns/instance/list", "serviceName=orders", token).status()).isEqualTo(200);

    clock.shift(TTL.plusSeconds(1));

    refusedEverywhere(token, "expired");
  }

  @Test
  void everyRouteRefusesATokenRemovedByAReload() {
    assertThat(call("GET", "/nacos/v1/ns/instance/list", "serviceName=orders", admin).status()).isEqualTo(200);
    String gone = admin;
    admin = auth.token("admin2", "admin@*"); // the state is checked as another admin
    auth.remove("admin");
    await().atMost(WAIT).until(() -> {
      try {
        loopback.server().sessions().authenticator().authenticate(gone, "10.9.9.9", "accessToken");
        return false;
      } catch (io.roster.server.model.RegistryException e) {
        return true;
      }
    });

    refusedEverywhere(gone, "refused: revoked: token \"admin\" was removed from the auth file at ");
  }

  @Test
  void aReadOnlyIdentityCannotChangeAnything() {
    String before = state();
    for (Route r : ROUTES) {
      Answer a = call(r.method(), r.path(), r.form(), reader);
      if (r.permission().equals("read")) {
        assertThat(a.status()).as(r.toString()).isEqualTo(200);
      } else {
        assertThat(a.status()).as(r + ": " + a.body()).isEqualTo(403);
        assertThat(a.body()).as(r.toString()).contains("\"reader\" lacks permission " + r.permission())
            .contains(r.where());
      }
    }
    assertThat(state()).isEqualTo(before);
  }

  @Test
  void anIdentityOfAnotherNamespaceGetsNothingHere() {
    String before = state();
    for (Route r : ROUTES) {
      Answer a = call(r.method(), r.path(), r.form(), devWriter);
      assertThat(a.status()).as(r + ": " + a.body()).isEqualTo(403);
      assertThat(a.body()).contains("lacks permission " + r.permission()).contains(r.where());
    }
    assertThat(state()).isEqualTo(before);
    // In its own namespace it may do what an admin does.
    assertThat(call("POST", "/nacos/v1/ns/instance", "namespaceId=dev&serviceName=orders&ip=10.0.0.9&port=1",
        devWriter).status()).isEqualTo(200);
    assertThat(call("PUT", "/nacos/v1/ns/instance", "namespaceId=dev&serviceName=orders&ip=10.0.0.9&port=1"
        + "&enabled=false", devWriter).status()).isEqualTo(200);
  }

  @Test
  void theIdentitiesAllowedUseEveryRouteAndANacosSubscriberIsPushed() {
    NacosConn subscriber = new NacosConn(loopback).setup().as(reader);
    assertThat(Envelope.body(subscriber.call("SubscribeServiceRequest", NacosConn.subscribe("orders", true)))
        .get("success").asBoolean()).isTrue();

    assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", writer))
        .isEqualTo(new Answer(200, "ok"));
    await().atMost(WAIT).until(() -> subscriber.pushes().stream().anyMatch(p -> hosts(p).contains("10.0.0.2:8080")));
    assertThat(call("PUT", "/nacos/v1/ns/instance/beat", "serviceName=orders&ip=10.0.0.2&port=8080", writer)
        .json().get("code").asInt()).isEqualTo(NacosHttpApi.OK);
    assertThat(call("DELETE", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", writer).status())
        .isEqualTo(200);
    await().atMost(WAIT).until(() -> {
      List<JsonNode> pushes = subscriber.pushes();
      return !pushes.isEmpty() && !hosts(pushes.get(pushes.size() - 1)).contains("10.0.0.2:8080");
    });
    // Taking an instance out of traffic: an admin's, here through the Bearer header curl users send.
    try (AuditLines audit = new AuditLines()) {
      assertThat(bearer("PUT", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080&enabled=false",
          admin).status()).isEqualTo(200);
      assertThat(audit.lines()).containsExactly("audit: who=admin from=127.0.0.1 action=UpdateInstance(HTTP) "
          + "target=public/DEFAULT_GROUP@@orders 10.0.0.1:8080/DEFAULT change=enabled=false result=ok");
    }
    assertThat(call("GET", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080", reader).json()
        .get("enabled").asBoolean()).isFalse();
    assertThat(call("GET", "/nacos/v1/ns/service/list", "", reader).json().get("count").asInt()).isEqualTo(1);
    assertThat(call("GET", "/nacos/v1/ns/operator/metrics", "onlyStatus=false", admin).json().has("serviceCount"))
        .isTrue();
    assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=" + LOGGER + "&logLevel=INFO", admin).status())
        .isEqualTo(200);
  }

  /**
   * The audit trail cannot be silenced through the log-level API: an admin that sets {@code
   * roster.audit} to OFF gets 400 naming the logger, and one that turns off the root or {@code
   * roster} logger still leaves a line for the instance it then takes out of traffic.
   */
  @Test
  void theAuditTrailCannotBeTurnedOffThroughTheLogLevelApi() {
    LoggerFactory.getLogger("roster.audit");
    for (String level : List.of("OFF", "ERROR", "WARN")) {
      Answer refused = call("PUT", "/nacos/v1/ns/operator/log", "logName=roster.audit&logLevel=" + level, admin);
      assertThat(refused.status()).as(refused.body()).isEqualTo(400);
      assertThat(refused.body()).contains("logName: \"roster.audit\"").contains("the audit trail's");
    }
    ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(
        org.slf4j.Logger.ROOT_LOGGER_NAME);
    ch.qos.logback.classic.Level rootLevel = root.getLevel();
    try (AuditLines audit = new AuditLines()) {
      LoggerFactory.getLogger("roster");
      assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=ROOT&logLevel=OFF", admin).status()).isEqualTo(200);
      assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=roster&logLevel=OFF", admin).status()).isEqualTo(200);
      assertThat(bearer("PUT", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080&enabled=false",
          admin).status()).isEqualTo(200);
      assertThat(audit.lines()).contains("audit: who=admin from=127.0.0.1 action=UpdateInstance(HTTP) "
          + "target=public/DEFAULT_GROUP@@orders 10.0.0.1:8080/DEFAULT change=enabled=false result=ok");
    } finally {
      root.setLevel(rootLevel);
      ((ch.qos.logback.classic.Logger) LoggerFactory.getLogger("roster")).setLevel(null);
    }
  }

  @Test
  void aPersistentInstanceOfOneIdentityIsChangedOnlyByItOrAnAdmin() {
    String rival = auth.token("rival", "write@public");
    await().atMost(WAIT).pollInterval(java.time.Duration.ofSeconds(1))
        .until(() -> call("GET", "/nacos/v1/ns/service/list", "", rival).status() == 200);
    String db = "serviceName=db&ip=127.0.0.8&port=21902&ephemeral=false";
    assertThat(call("POST", "/nacos/v1/ns/instance", db, writer).status()).isEqualTo(200);
    var before = call("GET", "/nacos/v1/ns/instance/list", "serviceName=db", reader).json().get("hosts");

    for (Route r : List.of(new Route("POST", "/nacos/v1/ns/instance", db + "&weight=7&metadata=%7B%22by%22%3A%22B%22%7D",
        "", ""), new Route("DELETE", "/nacos/v1/ns/instance", db, "", ""))) {
      Answer a = call(r.method(), r.path(), r.form(), rival);
      assertThat(a.status()).as(r + ": " + a.body()).isEqualTo(403);
      assertThat(a.body()).contains("is registered by \"writer\"");
    }
    assertThat(call("GET", "/nacos/v1/ns/instance/list", "serviceName=db", reader).json().get("hosts")).isEqualTo(before);
    assertThat(call("DELETE", "/nacos/v1/ns/instance", db, writer).status()).isEqualTo(200);
  }

  @Test
  void aHeartbeatInstanceOfOneIdentityIsChangedOnlyByItOrAnAdmin() {
    String rival = auth.token("rival", "write@public");
    await().atMost(WAIT).pollInterval(java.time.Duration.ofSeconds(1))
        .until(() -> call("GET", "/nacos/v1/ns/service/list", "", rival).status() == 200);
    assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", writer).status())
        .isEqualTo(200);
    String before = state();

    for (Route r : List.of(new Route("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080&weight=5",
            "", ""), new Route("DELETE", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", "", ""),
        new Route("PUT", "/nacos/v1/ns/instance/beat", "serviceName=orders&ip=10.0.0.2&port=8080", "", ""))) {
      Answer a = call(r.method(), r.path(), r.form(), rival);
      assertThat(a.status()).as(r + ": " + a.body()).isEqualTo(403);
      assertThat(a.body()).contains("is registered by \"writer\": only that identity or an admin may change it");
    }
    assertThat(state()).isEqualTo(before);

    assertThat(call("DELETE", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", admin).status())
        .isEqualTo(200);
    assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.2&port=8080", rival).status())
        .as("gone, so anyone with write may register it").isEqualTo(200);
  }

  @Test
  void theStatusProbeStaysOpenAndTheConfigCenterIsStillNotServed() {
    assertThat(call("GET", "/nacos/v1/ns/operator/metrics", "", null)).isEqualTo(new Answer(200, "{\"status\":\"UP\"}"));
    assertThat(call("GET", "/nacos/v1/cs/configs", "dataId=x&group=y", null).status()).isEqualTo(501);
  }

  @Test
  void bothLoginsAnswerWhatTheClientsReadAndTheTokenWorks() {
    for (String path : List.of(NacosLogin.V1, NacosLogin.V3)) {
      JsonNode ops = login(path, "ops");
      assertThat(ops.get("tokenTtl").asLong()).isEqualTo(TTL.toSeconds());
      assertThat(ops.get("globalAdmin").asBoolean()).isTrue();
      assertThat(ops.get("username").asText()).isEqualTo("ops");
      assertThat(call("PUT", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080&weight=3",
          ops.get("accessToken").asText()).status()).isEqualTo(200);

      JsonNode app = login(path, "orders-app");
      assertThat(app.get("globalAdmin").asBoolean()).isFalse();
      String token = app.get("accessToken").asText();
      assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.5&port=1", token).status())
          .isEqualTo(200);
      assertThat(call("POST", "/nacos/v1/ns/instance", "serviceName=payments&ip=10.0.0.5&port=1", token).status())
          .isEqualTo(403);
    }
  }

  @Test
  void theOlderV1LoginPathLogsInAsTheOtherDoes() {
    JsonNode ops = login("/nacos/v1/auth/login", "ops");
    assertThat(ops.get("tokenTtl").asLong()).isEqualTo(TTL.toSeconds());
    assertThat(ops.get("globalAdmin").asBoolean()).isTrue();
    assertThat(ops.get("username").asText()).isEqualTo("ops");
    assertThat(call("GET", "/nacos/v1/ns/instance/list", "serviceName=orders", ops.get("accessToken").asText())
        .status()).isEqualTo(200);
    Answer wrong = post("/nacos/v1/auth/login?username=ops", "password=" + enc("not the password"));
    assertThat(wrong.status()).isEqualTo(403);
    assertThat(wrong.body()).contains("unknown user or wrong password");
  }

  @Test
  void aWrongPasswordOrUnknownUserIs403AndALoginIsAPost() {
    Answer wrong = post(NacosLogin.V1 + "?username=ops", "password=" + enc("not the password"));
    assertThat(wrong.status()).isEqualTo(403);
    assertThat(wrong.body()).contains("unknown user or wrong password");
    assertThat(post(NacosLogin.V3 + "?username=nobody", "password=" + enc(PASSWORD)).status()).isEqualTo(403);
    assertThat(call("GET", NacosLogin.V1, "username=ops&password=x", null).status()).isEqualTo(405);
    assertThat(post(NacosLogin.V1, "password=x").body()).startsWith("username: missing");
  }

  @Test
  void withAuthOffTheLoginAnswersAnEmptyTokenAndEveryoneMayDoEverything() {
    loopback.close();
    loopback.start();
    JsonNode off = login(NacosLogin.V1, "anyone");
    assertThat(off.get("accessToken").asText()).isEmpty();
    assertThat(off.get("tokenTtl").asLong()).isEqualTo(Authenticator.DEFAULT_TOKEN_TTL.toSeconds());
    assertThat(off.get("globalAdmin").asBoolean()).isTrue();
    assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=" + LOGGER + "&logLevel=INFO", null).status())
        .isEqualTo(200);
  }

  // --- helpers ---

  /** Every route is refused with 403 for {@code token}, its body saying why and what was needed; nothing changed. */
  private void refusedEverywhere(String token, String why) {
    String before = state();
    for (Route r : ROUTES) {
      Answer a = call(r.method(), r.path(), r.form(), token);
      assertThat(a.status()).as(r + ": " + a.body()).isEqualTo(403);
      assertThat(a.body()).as(r.toString()).contains(why)
          .contains("needs permission " + r.permission() + " on " + (r.where().equals("every namespace")
              ? "every namespace" : "namespace \"" + r.where() + "\""));
    }
    assertThat(state()).isEqualTo(before);
  }

  /** What an admin sees: the service's instances (enabled ones too) and the server's log level. */
  private String state() {
    JsonNode list = call("GET", "/nacos/v1/ns/instance/list", "serviceName=orders", admin).json();
    JsonNode one = call("GET", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.1&port=8080", admin).json();
    Level level = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(LOGGER).getLevel();
    return hosts(list) + " " + one.get("enabled") + "/" + one.get("weight") + " " + level;
  }

  private static List<String> hosts(JsonNode serviceInfo) {
    JsonNode hosts = serviceInfo.has("serviceInfo") ? serviceInfo.get("serviceInfo").get("hosts")
        : serviceInfo.get("hosts");
    return StreamSupport.stream(hosts.spliterator(), false)
        .map(h -> h.get("ip").asText() + ":" + h.get("port").asInt()).sorted().toList();
  }

  private JsonNode login(String path, String user) {
    Answer a = post(path + "?username=" + user, "password=" + enc(PASSWORD));
    assertThat(a.status()).as(a.body()).isEqualTo(200);
    return a.json();
  }

  private Answer post(String pathAndQuery, String form) {
    return send(HttpRequest.newBuilder(uri(pathAndQuery)).header("Content-Type", "application/x-www-form-urlencoded")
        .POST(BodyPublishers.ofString(form)));
  }

  /** {@code form} in the body for POST and PUT, in the query string otherwise, with {@code accessToken} when given. */
  private Answer call(String method, String path, String form, String token) {
    String params = token == null ? form : form + (form.isEmpty() ? "" : "&") + "accessToken=" + enc(token);
    boolean body = method.equals("POST") || method.equals("PUT");
    HttpRequest.Builder b = HttpRequest.newBuilder(uri(body ? path : path + "?" + params));
    if (body) {
      b.header("Content-Type", "application/x-www-form-urlencoded");
    }
    return send(b.method(method, body ? BodyPublishers.ofString(params) : BodyPublishers.noBody()));
  }

  private Answer bearer(String method, String path, String form, String token) {
    return send(HttpRequest.newBuilder(uri(path)).header("Authorization", "Bearer " + token)
        .header("Content-Type", "application/x-www-form-urlencoded").method(method, BodyPublishers.ofString(form)));
  }

  private URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + loopback.server().httpPort() + pathAndQuery);
  }

  private Answer send(HttpRequest.Builder b) {
    try {
      var r = http.send(b.timeout(WAIT).build(), BodyHandlers.ofString());
      return new Answer(r.statusCode(), r.body());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
