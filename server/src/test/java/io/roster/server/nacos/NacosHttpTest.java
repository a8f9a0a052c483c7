package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import com.fasterxml.jackson.databind.JsonNode;
import io.roster.proto.v1.ServiceInfo;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * The Nacos v1 HTTP API over a real loopback socket ({@link HttpClient}), with a Roster
 * session as the subscriber that must be pushed: each endpoint, its errors, heartbeat expiry
 * (short timings through the instance's metadata) and {@code enabled=false}.
 */
class NacosHttpTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private static final Duration WAIT = TestTime.seconds(10);
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(WAIT).build();

  private record Answer(int status, String body) {
    JsonNode json() {
      try {
        return NacosMapping.JSON.readTree(body);
      } catch (Exception e) {
        throw new AssertionError("not JSON: " + body, e);
      }
    }
  }

  private Answer call(String method, String pathAndQuery, String form) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + loopback.server().httpPort()
        + pathAndQuery)).timeout(WAIT);
    if (form != null) {
      b.header("Content-Type", "application/x-www-form-urlencoded");
    }
    b.method(method, form == null ? BodyPublishers.noBody() : BodyPublishers.ofString(form));
    try {
      HttpResponse<String> r = http.send(b.build(), BodyHandlers.ofString());
      return new Answer(r.statusCode(), r.body());
    } catch (Exception e) {
      throw new AssertionError(method + " " + pathAndQuery, e);
    }
  }

  private Answer register(String form) {
    return call("POST", "/nacos/v1/ns/instance", form);
  }

  private TestSession subscriber(String service) {
    TestSession s = loopback.open(loopback.newChannel()).hello("consumer");
    assertThat(s.subscribe(service).getOk()).isTrue();
    return s;
  }

  private static ServiceKey key(String service) {
    return ServiceKey.of("", "", service);
  }

  @Test
  void registerFromAFormBodyThenListDetailAndServiceList() {
    TestSession consumer = subscriber("orders");
    Answer ok = register("serviceName=orders&ip=10.0.0.1&port=8080&weight=2.5&clusterName=c1"
        + "&metadata=%7B%22zone%22%3A%22a%22%7D");
    assertThat(ok).isEqualTo(new Answer(200, "ok"));
    ServiceInfo pushed = consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    assertThat(pushed.getInstances(0).getWeight()).isEqualTo(2.5);
    assertThat(pushed.getInstances(0).getMetadataMap()).containsEntry("zone", "a");
    assertThat(loopback.server().registry().ownerOf(key("orders"), new InstanceKey("10.0.0.1", 8080, "c1")).kind())
        .isEqualTo(Owner.Kind.LEASE);

    JsonNode list = call("GET", "/nacos/v1/ns/instance/list?serviceName=orders", null).json();
    assertThat(list.get("name").asText()).isEqualTo("DEFAULT_GROUP@@orders");
    assertThat(list.get("cacheMillis").asLong()).isEqualTo(10_000);
    assertThat(list.get("hosts")).hasSize(1);
    JsonNode host = list.get("hosts").get(0);
    assertThat(host.get("ip").asText()).isEqualTo("10.0.0.1");
    assertThat(host.get("clusterName").asText()).isEqualTo("c1");
    assertThat(host.get("instanceId").asText()).isEqualTo("10.0.0.1#8080#c1#DEFAULT_GROUP@@orders");

    JsonNode detail = call("GET", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=8080&cluster=c1", null)
        .json();
    assertThat(detail.get("service").asText()).isEqualTo("DEFAULT_GROUP@@orders");
    assertThat(detail.get("weight").asDouble()).isEqualTo(2.5);
    assertThat(detail.get("metadata").get("zone").asText()).isEqualTo("a");

    register("serviceName=users&ip=10.0.0.2&port=80");
    JsonNode services = call("GET", "/nacos/v1/ns/service/list?pageNo=1&pageSize=1", null).json();
    assertThat(services.get("count").asInt()).isEqualTo(2);
    assertThat(services.get("doms")).hasSize(1);
    assertThat(services.get("doms").get(0).asText()).isEqualTo("orders");
  }

  @Test
  void parametersInTheQueryStringWorkTooWithGroupAndNamespace() {
    assertThat(call("POST", "/nacos/v1/ns/instance?serviceName=shop%40%40orders&ip=10.0.0.1&port=80"
        + "&namespaceId=dev&metadata=a%3D1%2Cb%3D2", null).status()).isEqualTo(200);
    JsonNode list = call("GET", "/nacos/v1/ns/instance/list?serviceName=orders&groupName=shop&namespaceId=dev", null)
        .json();
    assertThat(list.get("hosts")).hasSize(1);
    assertThat(list.get("hosts").get(0).get("metadata").get("b").asText()).isEqualTo("2");
    assertThat(call("GET", "/nacos/v1/ns/instance/list?serviceName=orders", null).json().get("hosts")).isEmpty();
  }

  @Test
  void badInputIsRefusedNamingTheParameterAndHarmsNothingRegistered() {
    register("serviceName=orders&ip=10.0.0.1&port=80");

    assertThat(register("ip=10.0.0.1&port=80"))
        .isEqualTo(new Answer(400, "serviceName: missing (expected: a service name, optionally group@@name)"));
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=70000"))
        .isEqualTo(new Answer(400, "port: \"70000\" (expected: 1..65535)"));
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=80&weight=20000"))
        .isEqualTo(new Answer(400, "weight: 20000.0 (expected: 0..10000)"));
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=80&clusterName=a%20b").body())
        .startsWith("clusterName: \"a b\"");
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=80&metadata=%7Bnope").body())
        .isEqualTo("metadata: \"{nope\" (expected: a JSON object or k1=v1,k2=v2)");
    // Nested values are refused, as Nacos refuses a map that is not of strings; nothing is stored.
    assertThat(register("serviceName=orders&ip=10.0.0.9&port=80&metadata="
        + java.net.URLEncoder.encode("{\"a\":{\"b\":\"c\"},\"n\":[1,2]}", java.nio.charset.StandardCharsets.UTF_8)))
        .satisfies(r -> assertThat(r.status()).isEqualTo(400))
        .satisfies(r -> assertThat(r.body()).startsWith("metadata: ").contains("\"a\" holds an object"));
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=80&healthy=maybe").body())
        .isEqualTo("healthy: \"maybe\" (expected: true or false)");
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=80&metadata=preserved.heart.beat.timeout%3D5"))
        .isEqualTo(new Answer(400, "metadata.preserved.heart.beat.timeout: \"5\" (expected: milliseconds 100..86400000)"));
    // orders holds a heartbeat instance: a persistent one may not join it.
    Answer persistent = register("serviceName=orders&ip=10.0.0.2&port=80&ephemeral=false");
    assertThat(persistent.status()).isEqualTo(400);
    assertThat(persistent.body()).isEqualTo("service public/DEFAULT_GROUP@@orders has ephemeral instances, and a "
        + "service is either ephemeral or persistent: deregister its ephemeral instances before registering persistent "
        + "ones, or use another service");
    assertThat(register("serviceName=orders&ip=10.0.0.1&port=80&x=" + "y".repeat(70 * 1024)).status()).isEqualTo(413);

    assertThat(call("GET", "/nacos/v1/ns/nope", null))
        .satisfies(a -> assertThat(a.status()).isEqualTo(404))
        .satisfies(a -> assertThat(a.body()).startsWith("no such path: /nacos/v1/ns/nope"));
    assertThat(call("GET", "/elsewhere", null)).isEqualTo(new Answer(404, "no such path: /elsewhere"));
    assertThat(call("POST", "/nacos/v1/ns/instance/list?serviceName=orders", null).status()).isEqualTo(405);
    Answer config = call("GET", "/nacos/v1/cs/configs?dataId=a&group=b", null);
    assertThat(config.status()).isEqualTo(501);
    assertThat(config.body()).startsWith("Roster is a naming registry");

    JsonNode hosts = call("GET", "/nacos/v1/ns/instance/list?serviceName=orders", null).json().get("hosts");
    assertThat(hosts).hasSize(1);
    assertThat(hosts.get(0).get("weight").asDouble()).isEqualTo(1.0);
    assertThat(hosts.get(0).get("metadata")).isEmpty();
  }

  @Test
  void aSilentHeartbeatInstanceTurnsUnhealthyThenGoesAndSubscribersArePushedEachTime() {
    TestSession consumer = subscriber("orders");
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);
    // 100 ms beats, unhealthy after 300 ms, removed after 1.3 s of silence: each state lasts long
    // enough to be pushed on its own, also on a loaded machine.
    register("serviceName=orders&ip=10.0.0.1&port=80&metadata=" + java.net.URLEncoder.encode(
        "{\"preserved.heart.beat.interval\":\"100\",\"preserved.heart.beat.timeout\":\"300\","
            + "\"preserved.ip.delete.timeout\":\"1300\"}", java.nio.charset.StandardCharsets.UTF_8));
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1 && !i.getInstances(0).getHealthy());
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);

    JsonNode beat = call("PUT", "/nacos/v1/ns/instance/beat?serviceName=orders&ip=10.0.0.1&port=80", null).json();
    assertThat(beat.get("code").asInt()).isEqualTo(NacosHttpApi.RESOURCE_NOT_FOUND);
    assertThat(beat.get("clientBeatInterval").asLong()).isEqualTo(5000);
    assertThat(beat.get("lightBeatEnabled").asBoolean()).isTrue();
  }

  @Test
  void beatsRenewABeatForAnUnhealthyInstanceHealsItAndABeatBodyRegisters() {
    register("serviceName=orders&ip=10.0.0.1&port=80&metadata=preserved.heart.beat.interval%3D100,"
        + "preserved.heart.beat.timeout%3D300,preserved.ip.delete.timeout%3D60000");
    TestSession consumer = subscriber("orders");
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1 && !i.getInstances(0).getHealthy());
    assertThat(call("GET", "/nacos/v1/ns/instance/list?serviceName=orders&healthyOnly=true", null).json().get("hosts"))
        .isEmpty();
    JsonNode beat = call("PUT", "/nacos/v1/ns/instance/beat", "serviceName=orders&ip=10.0.0.1&port=80").json();
    assertThat(beat.get("code").asInt()).isEqualTo(NacosHttpApi.OK);
    assertThat(beat.get("clientBeatInterval").asLong()).isEqualTo(100);
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1 && i.getInstances(0).getHealthy());

    String body = "{\"ip\":\"10.0.0.2\",\"port\":81,\"cluster\":\"c2\",\"serviceName\":\"DEFAULT_GROUP@@orders\","
        + "\"weight\":3,\"metadata\":{\"v\":\"1\"}}";
    JsonNode registered = call("PUT", "/nacos/v1/ns/instance/beat", "serviceName=DEFAULT_GROUP%40%40orders&beat="
        + java.net.URLEncoder.encode(body, java.nio.charset.StandardCharsets.UTF_8)).json();
    assertThat(registered.get("code").asInt()).isEqualTo(NacosHttpApi.OK);
    ServiceInfo both = consumer.awaitPush("orders", i -> i.getInstancesCount() == 2);
    assertThat(both.getInstances(1).getCluster()).isEqualTo("c2");
    assertThat(both.getInstances(1).getWeight()).isEqualTo(3.0);
    assertThat(both.getInstances(1).getMetadataMap()).containsEntry("v", "1");
  }

  /** {@code enabled=false} (Spring Cloud's {@code /actuator/serviceregistry?status=DOWN}) holds until {@code enabled=true}. */
  @Test
  void enabledFalseHidesAnInstanceFromConsumersUntilEnabledTrue() {
    TestSession provider = loopback.open(loopback.newChannel()).hello("provider");
    assertThat(provider.register("orders", "10.0.0.7", 8080).getOk()).isTrue();
    TestSession consumer = subscriber("orders");
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);

    String form = "serviceName=orders&ip=10.0.0.7&port=8080&enabled=false";
    assertThat(call("PUT", "/nacos/v1/ns/instance", form)).isEqualTo(new Answer(200, "ok"));
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);
    assertThat(call("GET", "/nacos/v1/ns/instance/list?serviceName=orders", null).json().get("hosts")).isEmpty();
    JsonNode detail = call("GET", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.7&port=8080", null).json();
    assertThat(detail.get("enabled").asBoolean()).isFalse();
    // The owner registers it again (a redo, a refresh): it stays out of traffic (decision 40).
    assertThat(provider.register("orders", "10.0.0.7", 8080).getOk()).isTrue();
    assertThat(loopback.server().registry().snapshot(key("orders")).instances()).isEmpty();

    assertThat(call("PATCH", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.7&port=8080&enabled=true")
        .status()).isEqualTo(200);
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    assertThat(loopback.server().registry().ownerOf(key("orders"), new InstanceKey("10.0.0.7", 8080, "DEFAULT")).kind())
        .as("an update keeps the owner").isEqualTo(Owner.Kind.SESSION);

    assertThat(call("PUT", "/nacos/v1/ns/instance", "serviceName=orders&ip=10.0.0.9&port=1&enabled=false").status())
        .isEqualTo(404);
  }

  @Test
  void deleteEndsAHeartbeatInstanceButNotOneAConnectionHolds() {
    TestSession consumer = subscriber("orders");
    register("serviceName=orders&ip=10.0.0.1&port=80");
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    assertThat(call("DELETE", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=80", null))
        .isEqualTo(new Answer(200, "ok"));
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);
    assertThat(call("DELETE", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.1&port=80", null).status())
        .as("nothing there: ok, as Nacos").isEqualTo(200);

    TestSession provider = loopback.open(loopback.newChannel()).hello("provider");
    provider.register("orders", "10.0.0.7", 8080);
    Answer refused = call("DELETE", "/nacos/v1/ns/instance?serviceName=orders&ip=10.0.0.7&port=8080", null);
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.body()).contains("is held by a connection");
    assertThat(loopback.server().registry().snapshot(key("orders")).instances()).hasSize(1);
  }

  @Test
  void closingTheServerClosesTheHttpPort() throws Exception {
    int port = loopback.server().httpPort();
    assertThat(call("GET", "/nacos/v1/ns/operator/metrics", null).status()).isEqualTo(200);
    loopback.server().close();
    assertThatThrownBy(() -> new java.net.Socket(java.net.InetAddress.getLoopbackAddress(), port).close()).isInstanceOf(java.net.ConnectException.class);
  }

  @Test
  void theHttpPortCanBeTurnedOff() {
    try (LoopbackServer off = LoopbackServer.with(b -> b.httpPort(io.roster.server.config.ServerConfig.HTTP_PORT_OFF))) {
      off.start();
      assertThat(off.server().httpPort()).isEqualTo(-1);
    }
  }

  @Test
  void metricsSayUpAndTheLogLevelOfALoggerChangesAtRuntime() {
    assertThat(call("GET", "/nacos/v1/ns/operator/metrics", null).json().toString()).isEqualTo("{\"status\":\"UP\"}");
    register("serviceName=orders&ip=10.0.0.1&port=80");
    JsonNode full = call("GET", "/nacos/v1/ns/operator/metrics?onlyStatus=false", null).json();
    assertThat(full.get("serviceCount").asInt()).isEqualTo(1);
    assertThat(full.get("ephemeralIpPortClientCount").asInt()).isEqualTo(1);

    String name = "io.roster.server.registry.Registry";
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    Level before = context.getLogger(name).getLevel();
    try {
      assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=" + name + "&logLevel=debug"))
          .isEqualTo(new Answer(200, "ok"));
      assertThat(context.getLogger(name).getLevel()).isEqualTo(Level.DEBUG);
    } finally {
      context.getLogger(name).setLevel(before);
    }
    assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=" + name + "&logLevel=LOUD").body())
        .isEqualTo("logLevel: \"LOUD\" (expected: TRACE, DEBUG, INFO, WARN, ERROR or OFF)");
    assertThat(call("PUT", "/nacos/v1/ns/operator/log", "logName=no.such.Logger&logLevel=INFO").status())
        .isEqualTo(400);
    assertThat(context.exists("no.such.Logger")).as("a request creates no logger").isNull();
  }

  @Test
  void aServiceIsCreatedWithItsSettingsAndDeletedOnlyWithoutInstances() {
    Answer created = call("POST", "/nacos/v1/ns/service",
        "serviceName=fresh&protectThreshold=0.5&metadata=%7B%22team%22%3A%22a%2Cb%3Dc%22%7D");
    assertThat(created.status()).as(created.body()).isEqualTo(200);
    JsonNode detail = call("GET", "/nacos/v3/admin/ns/service?serviceName=fresh", null).json().get("data");
    assertThat(detail.get("protectThreshold").asDouble()).isEqualTo(0.5);
    assertThat(detail.get("metadata").get("team").asText()).isEqualTo("a,b=c");
    Answer again = call("POST", "/nacos/v1/ns/service", "serviceName=fresh");
    assertThat(again.status()).isEqualTo(400);
    assertThat(again.body()).contains("DEFAULT_GROUP@@fresh already exists in namespace public");

    assertThat(register("serviceName=fresh&ip=10.0.0.1&port=80&ephemeral=false").body()).isEqualTo("ok");
    Answer refused = call("DELETE", "/nacos/v1/ns/service?serviceName=fresh", null);
    assertThat(refused.status()).isEqualTo(400);
    assertThat(refused.body()).contains("DEFAULT_GROUP@@fresh has 1 instance in namespace public: deregister them first");
    assertThat(call("GET", "/nacos/v3/admin/ns/service?serviceName=fresh", null).json().get("data")
        .get("protectThreshold").asDouble()).isEqualTo(0.5);

    assertThat(call("DELETE", "/nacos/v1/ns/instance?serviceName=fresh&ip=10.0.0.1&port=80&ephemeral=false", null)
        .body()).isEqualTo("ok");
    assertThat(call("DELETE", "/nacos/v1/ns/service?serviceName=fresh", null).body()).isEqualTo("ok");
    assertThat(call("GET", "/nacos/v3/admin/ns/service?serviceName=fresh", null).status()).isEqualTo(404);
    assertThat(call("DELETE", "/nacos/v1/ns/service?serviceName=fresh", null).status()).isEqualTo(404);
  }
}
