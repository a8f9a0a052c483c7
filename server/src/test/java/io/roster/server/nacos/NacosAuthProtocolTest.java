package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.roster.proto.nacos.Payload;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.ShiftedClock;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse.BodyHandlers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Nacos gRPC protocol with auth on, spoken by hand over a real loopback socket: each naming
 * request's {@code accessToken} header is checked; no token, a wrong, expired or removed one, a
 * read-only identity writing and an identity of another namespace get {@code ErrorResponse} 403
 * (the code the official client logs in again on) and change nothing; the identities allowed
 * register, subscribe and are pushed. A connection keeps the identity of its first request, ends
 * when that identity leaves the auth file, and outlives the token it proved it with.
 */
class NacosAuthProtocolTest {

  private static final String PASSWORD = "correct horse battery";
  private static final Duration TTL = Duration.ofMinutes(1);
  private static final Duration WAIT = TestTime.seconds(10);

  private final ShiftedClock clock = new ShiftedClock();

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest().scheduler(clock);

  @TempDir Path dir;
  private AuthFiles auth;
  private String writer;
  private String reader;
  private String devWriter;
  private String gone;
  private String writer2;

  /** Each naming request type, on service orders of namespace public, and what it needs. */
  private record Request(String type, String json, String permission) {}

  private static final List<Request> REQUESTS = List.of(
      new Request("InstanceRequest", NacosConn.register("orders", "10.0.0.2", 80), "write"),
      new Request("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80)
          .replace("registerInstance", "deregisterInstance"), "write"),
      new Request("BatchInstanceRequest", "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"orders\","
          + "\"groupName\":\"DEFAULT_GROUP\",\"type\":\"batchRegisterInstance\",\"instances\":[{\"ip\":\"10.0.0.3\","
          + "\"port\":80,\"weight\":1.0,\"healthy\":true,\"enabled\":true,\"ephemeral\":true,\"clusterName\":"
          + "\"DEFAULT\",\"metadata\":{}}],\"module\":\"naming\"}", "write"),
      new Request("SubscribeServiceRequest", NacosConn.subscribe("orders", true), "read"),
      new Request("ServiceQueryRequest", "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"orders\","
          + "\"groupName\":\"DEFAULT_GROUP\",\"cluster\":\"\",\"healthyOnly\":false,\"module\":\"naming\"}", "read"),
      new Request("ServiceListRequest", "{\"headers\":{},\"namespace\":\"public\",\"groupName\":\"DEFAULT_GROUP\","
          + "\"pageNo\":1,\"pageSize\":10,\"module\":\"naming\"}", "read"));

  private NacosConn owner;

  @BeforeEach
  void setUp() {
    auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", PASSWORD, "admin@*");
    writer = auth.token("writer", "write@public");
    reader = auth.token("reader", "read@*");
    devWriter = auth.token("dev-writer", "admin@dev");
    gone = auth.token("gone", "write@public");
    writer2 = auth.token("writer2", "write@public");
    loopback.start(b -> b.authFile(auth.path()).tokenTtl(TTL));
    owner = new NacosConn(loopback).setup().as(writer);
    assertThat(ok(owner.call("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80)))).isTrue();
  }

  @AfterEach
  void tearDown() {
    loopback.close();
    clock.close();
  }

  @Test
  void aConnectionOpensWithoutATokenAndItsHealthChecksNeedNone() {
    NacosConn c = new NacosConn(loopback).setup();
    assertThat(NacosConn.type(c.call("HealthCheckRequest", "{\"headers\":{},\"module\":\"internal\"}")))
        .isEqualTo("HealthCheckResponse");
  }

  @Test
  void everyNamingRequestWithoutATokenIs403() {
    refusedEverywhere(new NacosConn(loopback).setup(), "accessToken: missing");
  }

  @Test
  void everyNamingRequestWithAWrongTokenIs403() {
    refusedEverywhere(new NacosConn(loopback).setup().as("rst_not-a-token-of-this-server"), "does not list");
  }

  @Test
  void everyNamingRequestWithAnExpiredTokenIs403() {
    NacosConn c = new NacosConn(loopback).setup().as(login("ops"));
    assertThat(ok(c.call("ServiceListRequest", REQUESTS.get(5).json()))).isTrue();

    clock.shift(TTL.plusSeconds(1));

    refusedEverywhere(c, "expired");
  }

  @Test
  void aRemovedTokenIs403AndItsConnectionsEndTakingTheirInstances() {
    NacosConn held = new NacosConn(loopback).setup().as(gone);
    assertThat(ok(held.call("InstanceRequest", NacosConn.register("orders", "10.0.0.7", 80)))).isTrue();
    assertThat(registered()).contains("10.0.0.7:80");

    auth.remove("gone");

    await().atMost(WAIT).until(() -> held.streamEnded);
    assertThat(registered()).doesNotContain("10.0.0.7:80");
    refusedEverywhere(new NacosConn(loopback).setup().as(gone), "refused: revoked: token \"gone\" was removed");
  }

  @Test
  void aReadOnlyIdentityReadsButChangesNothing() {
    NacosConn c = new NacosConn(loopback).setup().as(reader);
    List<String> before = registered();
    for (Request r : REQUESTS) {
      Payload answer = c.call(r.type(), r.json());
      if (r.permission().equals("read")) {
        assertThat(ok(answer)).as(r.type() + ": " + Envelope.body(answer)).isTrue();
      } else {
        assertRefused(answer, r, "\"reader\" lacks permission write on namespace \"public\"");
      }
    }
    assertThat(registered()).isEqualTo(before);
  }

  @Test
  void anIdentityOfAnotherNamespaceGetsNothingHere() {
    refusedEverywhere(new NacosConn(loopback).setup().as(devWriter), "\"dev-writer\" lacks permission");
  }

  @Test
  void theIdentitiesAllowedRegisterAndASubscriberIsPushed() {
    NacosConn consumer = new NacosConn(loopback).setup().as(reader);
    assertThat(ok(consumer.call("SubscribeServiceRequest", NacosConn.subscribe("orders", true)))).isTrue();

    NacosConn second = new NacosConn(loopback).setup().as(writer);
    assertThat(ok(second.call("InstanceRequest", NacosConn.register("orders", "10.0.0.2", 80)))).isTrue();

    await().atMost(WAIT).until(() -> consumer.pushes().stream()
        .anyMatch(p -> p.get("serviceInfo").get("hosts").size() == 2));
    JsonNode query = Envelope.body(consumer.call("ServiceQueryRequest", REQUESTS.get(4).json()));
    assertThat(query.get("serviceInfo").get("hosts")).hasSize(2);
  }

  @Test
  void aConnectionKeepsTheIdentityOfItsFirstRequest() {
    Payload other = owner.as(writer2)
        .call("InstanceRequest", NacosConn.register("orders", "10.0.0.1", 80).replace("registerInstance",
            "deregisterInstance"));

    assertThat(Envelope.body(other).get("errorCode").asInt()).isEqualTo(Envelope.NO_RIGHT);
    assertThat(Envelope.body(other).get("message").asText())
        .contains("proves \"writer2\", but this connection is \"writer\"");
    assertThat(registered()).contains("10.0.0.1:80");
  }

  @Test
  void aConnectionOutlivesTheAccessTokenItProvedItselfWith() {
    NacosConn c = new NacosConn(loopback).setup().as(login("ops"));
    assertThat(ok(c.call("InstanceRequest", NacosConn.register("orders", "10.0.0.8", 80)))).isTrue();
    AtomicInteger checks = new AtomicInteger();
    loopback.server().sessions().authenticator().onCheck(checks::incrementAndGet);

    clock.shift(TTL.plusSeconds(1));
    await().atMost(WAIT).until(() -> checks.get() >= 2); // the sessions were revalidated since

    assertThat(c.streamEnded).isFalse();
    assertThat(registered()).contains("10.0.0.8:80");
    // Its next request needs a token that is valid now: the client's own renewal.
    assertThat(Envelope.body(c.call("HealthCheckRequest", "{}")).get("success").asBoolean()).isTrue();
    assertThat(ok(c.call("InstanceRequest", NacosConn.register("orders", "10.0.0.8", 81)))).isFalse();
    assertThat(ok(c.as(login("ops")).call("InstanceRequest", NacosConn.register("orders", "10.0.0.8", 81))))
        .isTrue();
  }

  /**
   * A persistent instance (Nacos's {@code PersistentInstanceRequest}, as nacos-client sends it for
   * {@code ephemeral=false}) is replaced or removed only by the identity that registered it: another
   * writer of the namespace is refused 403 naming that identity, and the instance keeps its
   * weight and metadata.
   */
  @Test
  void aPersistentInstanceIsReplacedOrRemovedOnlyByTheIdentityThatRegisteredIt() {
    String db = "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"db\",\"groupName\":\"DEFAULT_GROUP\","
        + "\"type\":\"registerInstance\",\"instance\":{\"ip\":\"127.0.0.8\",\"port\":21902,\"weight\":WEIGHT,"
        + "\"healthy\":true,\"enabled\":true,\"ephemeral\":false,\"clusterName\":\"DEFAULT\",\"metadata\":META},"
        + "\"module\":\"naming\"}";
    NacosConn a = new NacosConn(loopback).setup().as(writer);
    assertThat(ok(a.call("PersistentInstanceRequest", db.replace("WEIGHT", "1.0").replace("META", "{}")))).isTrue();

    NacosConn b = new NacosConn(loopback).setup().as(writer2);
    for (String request : List.of(db.replace("WEIGHT", "7.0").replace("META", "{\"by\":\"B\"}"),
        db.replace("WEIGHT", "1.0").replace("META", "{}").replace("registerInstance", "deregisterInstance"))) {
      JsonNode refused = Envelope.body(b.call("PersistentInstanceRequest", request));
      assertThat(refused.get("success").asBoolean()).as(refused.toString()).isFalse();
      assertThat(refused.get("errorCode").asInt()).as(refused.toString()).isEqualTo(Envelope.NO_RIGHT);
      assertThat(refused.get("message").asText()).contains("is registered by \"writer\"");
    }
    var stored = loopback.server().registry().instance(ServiceKey.of("", "", "db"),
        new io.roster.server.model.InstanceKey("127.0.0.8", 21902, "DEFAULT"));
    assertThat(stored).isNotNull();
    assertThat(stored.weight()).isEqualTo(1.0);
    assertThat(stored.metadata()).isEmpty();
    assertThat(ok(a.call("PersistentInstanceRequest", db.replace("WEIGHT", "1.0").replace("META", "{}")
        .replace("registerInstance", "deregisterInstance")))).isTrue();
  }

  // --- helpers ---

  private void refusedEverywhere(NacosConn c, String why) {
    List<String> before = registered();
    for (Request r : REQUESTS) {
      assertRefused(c.call(r.type(), r.json()), r, why);
    }
    assertThat(registered()).isEqualTo(before);
    assertThat(loopback.server().sessions().all().stream().mapToInt(s -> s.subscriptionCount()).sum()).isZero();
  }

  /**
   * Refused as Nacos refuses it: the request's own response type (an {@code ErrorResponse} would
   * make the client retry instead of logging in again), resultCode 500, errorCode 403.
   */
  private static void assertRefused(Payload answer, Request r, String why) {
    JsonNode body = Envelope.body(answer);
    assertThat(NacosConn.type(answer)).as(r.type() + ": " + body)
        .isEqualTo(r.type().equals("ServiceQueryRequest") ? "QueryServiceResponse"
            : r.type().replace("Request", "Response"));
    assertThat(body.get("resultCode").asInt()).isEqualTo(500);
    assertThat(body.get("errorCode").asInt()).as(r.type() + ": " + body).isEqualTo(Envelope.NO_RIGHT);
    assertThat(body.get("message").asText()).as(r.type()).startsWith(r.type() + ": ").contains(why);
  }

  private static boolean ok(Payload p) {
    return Envelope.body(p).path("success").asBoolean(false);
  }

  /** What the registry holds for orders. */
  private List<String> registered() {
    return loopback.server().registry().snapshot(ServiceKey.of("", "", "orders")).instances().stream()
        .map(i -> i.ip() + ":" + i.port()).sorted().toList();
  }

  /** A Nacos login on the HTTP port, as the client does it; its access token. */
  private String login(String user) {
    try {
      var r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
              + loopback.server().httpPort() + NacosLogin.V1 + "?username=" + user))
          .header("Content-Type", "application/x-www-form-urlencoded")
          .POST(HttpRequest.BodyPublishers.ofString("password=" + URLEncoder.encode(PASSWORD, StandardCharsets.UTF_8)))
          .timeout(WAIT).build(), BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
      return NacosMapping.JSON.readTree(r.body()).get("accessToken").asText();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
