package io.roster.server.admin;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.roster.server.http.JsonEnvelope;
import io.roster.server.testing.AuthFiles;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
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
 * The admin APIs over real HTTP against a loopback server (docs/admin-api.md): Nacos 3's
 * {@code /nacos/v3/admin/ns/...} and Roster's {@code /roster/v1/admin/...}, their envelope,
 * paging and search, an operator's hold seen by a subscriber, and refusals that name why.
 */
class AdminApiTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TestTime.seconds(10)).build();

  private record Answer(int status, JsonNode body) {
    JsonNode data() {
      return body.get("data");
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
    return new Answer(r.statusCode(), JsonEnvelope.JSON.readTree(r.body()));
  }

  private Answer get(String pathAndQuery) throws Exception {
    return call("GET", pathAndQuery, null, null);
  }

  @Test
  void servicesArePagedAndSearchedWithTheirCounts() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    for (int i = 0; i < 25; i++) {
      assertThat(provider.register("svc-" + i, "10.0.0." + (i + 1), 80).getOk()).isTrue();
    }
    loopback.session("consumer").subscribe("svc-3");

    Answer page2 = get("/nacos/v3/admin/ns/service/list?pageNo=2&pageSize=10");
    assertThat(page2.status()).isEqualTo(200);
    assertThat(page2.body().get("code").asInt()).isZero();
    assertThat(page2.data().get("totalCount").asInt()).isEqualTo(25);
    assertThat(page2.data().get("pagesAvailable").asInt()).isEqualTo(3);
    assertThat(names(page2.data().get("pageItems"))).hasSize(10).isSorted();

    Answer search = get("/nacos/v3/admin/ns/service/list?serviceNameParam=SVC-1&pageSize=100");
    assertThat(names(search.data().get("pageItems")))
        .containsExactly("svc-1", "svc-10", "svc-11", "svc-12", "svc-13", "svc-14", "svc-15", "svc-16", "svc-17",
            "svc-18", "svc-19");
    JsonNode three = get("/nacos/v3/admin/ns/service/list?serviceNameParam=svc-3").data().get("pageItems").get(0);
    assertThat(three.get("ipCount").asInt()).isEqualTo(1);
    assertThat(three.get("healthyInstanceCount").asInt()).isEqualTo(1);
    assertThat(three.get("subscriberCount").asInt()).isEqualTo(1);
    assertThat(three.get("groupName").asText()).isEqualTo("DEFAULT_GROUP");

    Answer bad = get("/nacos/v3/admin/ns/service/list?pageSize=501");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().get("code").asInt()).isEqualTo(400);
    assertThat(bad.body().get("message").asText()).isEqualTo("pageSize: \"501\" (expected: an integer 1..500)");
  }

  @Test
  void servicesAreSortedByACountTheLargestFirst() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    for (int i = 0; i < 3; i++) {
      assertThat(provider.register("big", "10.0.1." + (i + 1), 80).getOk()).isTrue();
    }
    for (String name : List.of("a", "c")) {
      assertThat(provider.register(name, "10.0.2.1", 80).getOk()).isTrue();
    }

    assertThat(names(get("/nacos/v3/admin/ns/service/list?orderBy=ipCount").data().get("pageItems")))
        .containsExactly("big", "a", "c");
    JsonNode second = get("/nacos/v3/admin/ns/service/list?orderBy=healthyInstanceCount&pageNo=2&pageSize=2").data();
    assertThat(names(second.get("pageItems"))).containsExactly("c");
    assertThat(second.get("totalCount").asInt()).isEqualTo(3);
    assertThat(names(get("/nacos/v3/admin/ns/service/list?orderBy=name").data().get("pageItems")))
        .containsExactly("a", "big", "c");
    Answer bad = get("/nacos/v3/admin/ns/service/list?orderBy=size");
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().get("message").asText())
        .isEqualTo("orderBy: \"size\" (expected: name, ipCount or healthyInstanceCount)");
  }

  @Test
  void anOperatorsHoldIsShownWithTheOwnerAndReachesSubscribers() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    TestSession consumer = loopback.session("consumer");
    consumer.subscribe("orders");

    Answer off = call("PUT", "/nacos/v3/admin/ns/instance", "serviceName=orders&ip=10.0.0.1&port=80&enabled=false",
        null);
    assertThat(off.status()).as(off.body().toString()).isEqualTo(200);
    assertThat(off.data().asText()).isEqualTo("ok");
    consumer.awaitPush("orders", s -> s.getInstancesCount() == 0);

    JsonNode instance = get("/nacos/v3/admin/ns/instance/list?serviceName=orders").data().get(0);
    assertThat(instance.get("ip").asText()).isEqualTo("10.0.0.1");
    assertThat(instance.get("enabled").asBoolean()).isFalse();
    assertThat(instance.get("held").asBoolean()).isTrue();
    assertThat(instance.get("owner").get("kind").asText()).isEqualTo("session");

    Answer missing = call("PUT", "/nacos/v3/admin/ns/instance", "serviceName=orders&ip=10.0.0.9&port=80&enabled=false",
        null);
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.body().get("message").asText()).contains("no instance 10.0.0.9:80");
  }

  @Test
  void aServicesSettingsAreShownAndChangedAndBadValuesNamed() throws Exception {
    loopback.start();
    assertThat(loopback.session("provider").register("orders", "10.0.0.1", 80).getOk()).isTrue();
    Answer set = call("PUT", "/nacos/v3/admin/ns/service",
        "serviceName=orders&protectThreshold=0.5&metadata=team%3Dpayments", null);
    assertThat(set.status()).as(set.body().toString()).isEqualTo(200);

    JsonNode detail = get("/nacos/v3/admin/ns/service?serviceName=orders").data();
    assertThat(detail.get("protectThreshold").asDouble()).isEqualTo(0.5);
    assertThat(detail.get("metadata").get("team").asText()).isEqualTo("payments");
    assertThat(detail.get("clusterMap").has("DEFAULT")).isTrue();
    assertThat(detail.get("ipCount").asInt()).isEqualTo(1);

    Answer bad = call("PUT", "/nacos/v3/admin/ns/service", "serviceName=orders&protectThreshold=2", null);
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().get("message").asText()).startsWith("protectThreshold: 2").contains("0..1");
    assertThat(get("/nacos/v3/admin/ns/service?serviceName=orders").data().get("protectThreshold").asDouble())
        .isEqualTo(0.5);
    assertThat(get("/nacos/v3/admin/ns/service?serviceName=nothing").status()).isEqualTo(404);
  }

  @Test
  void rosterAddsNamespacesMembersAndSearchableConnections() throws Exception {
    loopback.start();
    assertThat(loopback.session("orders-app").register("orders", "10.0.0.1", 80).getOk()).isTrue();
    loopback.session("billing-app");

    JsonNode namespaces = get("/roster/v1/admin/namespaces").data();
    assertThat(namespaces.get(0).get("namespace").asText()).isEqualTo("public");
    assertThat(namespaces.get(0).get("serviceCount").asInt()).isEqualTo(1);
    assertThat(namespaces.get(0).get("instanceCount").asInt()).isEqualTo(1);

    JsonNode members = get("/roster/v1/admin/members").data();
    assertThat(members.get("writable").asBoolean()).isTrue();
    assertThat(members.get("members")).hasSize(1);

    JsonNode connections = get("/roster/v1/admin/connections?search=ORDERS").data();
    assertThat(connections.get("totalCount").asInt()).isEqualTo(1);
    JsonNode c = connections.get("pageItems").get(0);
    assertThat(c.get("clientId").asText()).isEqualTo("orders-app");
    assertThat(c.get("instanceCount").asInt()).isEqualTo(1);
    assertThat(c.get("protocol").asText()).isEqualTo("roster");
    assertThat(get("/roster/v1/admin/connections").data().get("totalCount").asInt()).isEqualTo(2);
  }

  @Test
  void withAuthReadersSeeButOnlyAdminsChangeOrListConnections() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String admin = auth.token("ops", "admin@*");
    String reader = auth.token("viewer", "read@public");
    loopback.start(b -> b.authFile(auth.path()));
    assertThat(loopback.open().helloFrame(io.roster.proto.v1.Hello.newBuilder().setClientId("p").setToken(admin))
        .hasWelcome()).isTrue();

    assertThat(call("GET", "/nacos/v3/admin/ns/service/list", null, null).status()).isEqualTo(403);
    assertThat(call("GET", "/nacos/v3/admin/ns/service/list", null, reader).status()).isEqualTo(200);
    Answer refused = call("PUT", "/nacos/v3/admin/ns/service", "serviceName=orders&protectThreshold=0.5", reader);
    assertThat(refused.status()).isEqualTo(403);
    assertThat(refused.body().get("message").asText()).contains("viewer").contains("admin");
    assertThat(call("GET", "/roster/v1/admin/connections", null, reader).status()).isEqualTo(403);
    JsonNode readerMay = call("GET", "/roster/v1/admin/permissions?namespaceId=public", null, reader).data();
    assertThat(readerMay.get("identity").asText()).isEqualTo("viewer");
    assertThat(readerMay.get("read").asBoolean()).isTrue();
    assertThat(readerMay.get("admin").asBoolean()).isFalse();
    assertThat(call("GET", "/roster/v1/admin/permissions", null, null).status()).isEqualTo(403);
    assertThat(call("GET", "/roster/v1/admin/connections", null, admin).data().get("totalCount").asInt()).isEqualTo(1);
  }

  @Test
  void permissionsAnswerForOneServiceAndNameTheNamespacesTheCallerMayRead() throws Exception {
    AuthFiles auth = AuthFiles.create(dir.resolve("auth.json"));
    String admin = auth.token("ops", "admin@*");
    String ordersAdmin = auth.token("orders-team", "read@public", "admin@public/orders*");
    String everywhere = auth.token("auditor", "read@*");
    loopback.start(b -> b.authFile(auth.path()));
    var registered = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + "/nacos/v1/ns/instance")).header("Content-Type", "application/x-www-form-urlencoded")
        .header("Authorization", "Bearer " + admin)
        .POST(BodyPublishers.ofString("namespaceId=dev&serviceName=billing&ip=10.0.0.9&port=80")).build(),
        BodyHandlers.ofString());
    assertThat(registered.body()).isEqualTo("ok");

    JsonNode orders = call("GET", "/roster/v1/admin/permissions?namespaceId=public&serviceName=orders-eu", null,
        ordersAdmin).data();
    assertThat(orders.get("admin").asBoolean()).isFalse();
    assertThat(orders.get("service").get("serviceName").asText()).isEqualTo("orders-eu");
    assertThat(orders.get("service").get("groupName").asText()).isEqualTo("DEFAULT_GROUP");
    assertThat(orders.get("service").get("admin").asBoolean()).isTrue();
    JsonNode billing = call("GET", "/roster/v1/admin/permissions?namespaceId=public&serviceName=billing", null,
        ordersAdmin).data();
    assertThat(billing.get("service").get("read").asBoolean()).isTrue();
    assertThat(billing.get("service").get("admin").asBoolean()).isFalse();
    assertThat(readable(ordersAdmin)).containsExactly("public");
    assertThat(readable(everywhere)).containsExactly("dev", "public");
  }

  private List<String> readable(String token) throws Exception {
    List<String> out = new ArrayList<>();
    call("GET", "/roster/v1/admin/permissions", null, token).data().get("namespaces").forEach(n -> out.add(n.asText()));
    return out;
  }

  @Test
  void aConnectionsDetailNamesTheInstancesItOwnsAndWhatItSubscribesTo() throws Exception {
    loopback.start();
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    assertThat(provider.register("orders", "10.0.0.2", 80).getOk()).isTrue();
    assertThat(provider.subscribe("payments").getOk()).isTrue();
    String id = get("/roster/v1/admin/connections?search=provider").data().get("pageItems").get(0)
        .get("connectionId").asText();

    JsonNode c = get("/roster/v1/admin/connection?connectionId=" + id).data();
    assertThat(c.get("clientId").asText()).isEqualTo("provider");
    assertThat(c.get("protocol").asText()).isEqualTo("roster");
    List<String> owned = new ArrayList<>();
    c.get("instances").forEach(i -> owned.add(i.get("serviceName").asText() + " " + i.get("ip").asText() + ":"
        + i.get("port").asInt() + " " + i.get("clusterName").asText()));
    assertThat(owned).containsExactlyInAnyOrder("orders 10.0.0.1:80 DEFAULT", "orders 10.0.0.2:80 DEFAULT");
    assertThat(c.get("subscriptions").get(0).get("serviceName").asText()).isEqualTo("payments");
    assertThat(c.get("subscriptions").get(0).get("groupName").asText()).isEqualTo("DEFAULT_GROUP");
    Answer missing = get("/roster/v1/admin/connection?connectionId=nope");
    assertThat(missing.status()).isEqualTo(404);
    assertThat(missing.body().get("message").asText()).contains("connectionId").contains("nope");
  }

  @Test
  void theEventStreamTellsOfEachChangeOfTheNamespacesServices() throws Exception {
    loopback.start();
    java.util.concurrent.BlockingQueue<String> events = events("public");

    TestSession provider = loopback.session("provider");
    assertThat(provider.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    JsonNode event = nextEvent(events, "service", e -> true);
    assertThat(event.get("name").asText()).isEqualTo("orders");
    assertThat(event.get("kind").asText()).isEqualTo("registered");
    assertThat(event.get("revision").asLong()).isPositive();
  }

  @Test
  void aDrainIsFollowedUntilEverySubscriberHasAcknowledged() throws Exception {
    loopback.start();
    assertThat(loopback.session("provider").register("orders", "10.0.0.1", 80).getOk()).isTrue();
    for (String consumer : List.of("consumer-1", "consumer-2")) {
      TestSession s = loopback.session(consumer);
      s.subscribe("orders");
      s.awaitPush("orders", info -> info.getInstancesCount() == 1);
    }
    java.util.concurrent.BlockingQueue<String> events = events("public");

    Answer started = call("POST", "/roster/v1/admin/drain", "serviceName=orders&ip=10.0.0.1&port=80&timeoutMs=10000",
        null);
    assertThat(started.status()).as(started.body().toString()).isEqualTo(200);
    String id = started.data().get("id").asText();
    JsonNode done = nextEvent(events, "drain", e -> e.get("id").asText().equals(id)
        && e.get("state").asText().equals("done"));
    assertThat(done.get("notified").asInt()).isEqualTo(2);
    assertThat(done.get("acked").asInt()).isEqualTo(2);
    assertThat(done.get("timedOut").asInt()).isZero();
    assertThat(get("/roster/v1/admin/drain?id=" + id).data().get("state").asText()).isEqualTo("done");
    assertThat(get("/nacos/v3/admin/ns/instance/list?serviceName=orders").data().get(0).get("enabled").asBoolean())
        .isFalse();

    String missing = call("POST", "/roster/v1/admin/drain", "serviceName=orders&ip=10.0.0.9&port=80", null)
        .data().get("id").asText();
    assertThat(nextEvent(events, "drain", e -> e.get("id").asText().equals(missing)
        && !e.get("state").asText().equals("starting")).get("state").asText()).isEqualTo("not-registered");
    Answer bad = call("POST", "/roster/v1/admin/drain", "serviceName=orders&ip=10.0.0.1&port=80&timeoutMs=x", null);
    assertThat(bad.status()).isEqualTo(400);
    assertThat(bad.body().get("message").asText()).startsWith("timeoutMs: \"x\"");
  }

  /** The lines of the namespace's event stream, read on a thread of their own. */
  private java.util.concurrent.BlockingQueue<String> events(String namespace) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + "/roster/v1/admin/events?namespaceId=" + namespace)).build();
    var response = http.send(request, BodyHandlers.ofLines());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t)
        .startsWith("text/event-stream"));
    java.util.concurrent.BlockingQueue<String> lines = new java.util.concurrent.LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> response.body().forEach(lines::add), "sse-reader");
    reader.setDaemon(true);
    reader.start();
    return lines;
  }

  /** The data of the next event named {@code name} that {@code which} accepts; fails after 10 s of nothing. */
  private static JsonNode nextEvent(java.util.concurrent.BlockingQueue<String> lines, String name,
      java.util.function.Predicate<JsonNode> which) throws Exception {
    String event = "";
    for (String line = lines.poll(10, java.util.concurrent.TimeUnit.SECONDS); line != null;
        line = lines.poll(10, java.util.concurrent.TimeUnit.SECONDS)) {
      if (line.startsWith("event: ")) {
        event = line.substring("event: ".length());
      } else if (line.startsWith("data: ") && event.equals(name)) {
        JsonNode data = JsonEnvelope.JSON.readTree(line.substring("data: ".length()));
        if (which.test(data)) {
          return data;
        }
      }
    }
    throw new AssertionError("no " + name + " event");
  }

  @Test
  void theConsoleIsServedAndNacosConsoleUrlsLeadToIt() throws Exception {
    loopback.start();
    String base = "http://127.0.0.1:" + loopback.server().httpPort();
    for (String nacos : List.of("/nacos", "/nacos/", "/nacos/index.html", "/console")) {
      var r = http.send(HttpRequest.newBuilder(URI.create(base + nacos)).build(), BodyHandlers.discarding());
      assertThat(r.statusCode()).as(nacos).isIn(301, 302);
      assertThat(r.headers().firstValue("Location")).as(nacos).hasValueSatisfying(l -> assertThat(l).endsWith("/console/"));
    }
    var index = http.send(HttpRequest.newBuilder(URI.create(base + "/console/")).build(), BodyHandlers.ofString());
    assertThat(index.statusCode()).isEqualTo(200);
    assertThat(index.headers().firstValue("Content-Type")).hasValue("text/html;charset=UTF-8");
    assertThat(index.body()).contains("<title>Roster console</title>").contains("app.js");
    var app = http.send(HttpRequest.newBuilder(URI.create(base + "/console/app.js")).build(), BodyHandlers.ofString());
    assertThat(app.headers().firstValue("Content-Type")).hasValue("text/javascript;charset=UTF-8");
    assertThat(http.send(HttpRequest.newBuilder(URI.create(base + "/console/missing.js")).build(),
        BodyHandlers.discarding()).statusCode()).isEqualTo(404);
    JsonNode me = get("/roster/v1/admin/permissions").data();
    assertThat(me.get("admin").asBoolean()).isTrue();
  }

  private static List<String> names(JsonNode items) {
    List<String> out = new ArrayList<>();
    items.forEach(i -> out.add(i.get("name").asText()));
    return out;
  }
}
