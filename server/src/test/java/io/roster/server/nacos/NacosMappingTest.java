package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.roster.proto.nacos.Payload;
import io.roster.server.model.Instance;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.push.PushPayload;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Nacos's JSON shapes (as nacos-client 2.5.1 writes and reads them) to and from Roster's model. */
class NacosMappingTest {

  private static JsonNode json(String s) throws Exception {
    return NacosMapping.JSON.readTree(s);
  }

  private static JsonNode body(Payload p) {
    return Envelope.body(p);
  }

  @Test
  void publicAndEmptyNamespaceAreRostersDefault() {
    assertThat(NacosMapping.service("public", "DEFAULT_GROUP", "svc")).isEqualTo(ServiceKey.of("", "", "svc"));
    assertThat(NacosMapping.service("", "", "svc")).isEqualTo(new ServiceKey("public", "DEFAULT_GROUP", "svc"));
    assertThat(NacosMapping.service("dev-1", "shop", "svc")).isEqualTo(new ServiceKey("dev-1", "shop", "svc"));
  }

  @Test
  void aGroupedServiceNameCarriesItsGroup() throws Exception {
    ServiceKey k = NacosMapping.service(json(
        "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"shop@@orders\",\"groupName\":\"DEFAULT_GROUP\"}"));
    assertThat(k).isEqualTo(new ServiceKey("public", "shop", "orders"));
    assertThat(k.groupedName()).isEqualTo("shop@@orders");
  }

  @Test
  void badNamesAreRefusedWithNacosFieldNames() {
    assertThatThrownBy(() -> NacosMapping.service("public", "a group", "svc"))
        .isInstanceOf(RegistryException.class)
        .hasMessageStartingWith("groupName: \"a group\" (expected: 1..128 characters");
    assertThatThrownBy(() -> NacosMapping.service("public", "g", ""))
        .hasMessageStartingWith("serviceName: \"\" (expected:");
    assertThatThrownBy(() -> NacosMapping.service("p u b", "g", "s")).hasMessageStartingWith("namespace: ");
  }

  /** The instance the 2.5.1 client sends, with its output-only fields, read as Roster's. */
  @Test
  void readsTheClientsInstance() throws Exception {
    Instance i = NacosMapping.instance(json("{\"ip\":\"10.0.0.5\",\"port\":8080,\"weight\":2.0,\"healthy\":false,"
        + "\"enabled\":true,\"ephemeral\":true,\"clusterName\":\"c1\",\"metadata\":{\"k\":\"v\"},"
        + "\"instanceHeartBeatInterval\":5000,\"instanceHeartBeatTimeOut\":15000,\"ipDeleteTimeout\":30000,"
        + "\"instanceIdGenerator\":\"simple\"}"));
    assertThat(i).isEqualTo(new Instance("10.0.0.5", 8080, 2.0, false, true, true, "c1", Map.of("k", "v"), ""));
    assertThat(i.withId(new ServiceKey("public", "DEFAULT_GROUP", "orders")).instanceId())
        .isEqualTo("10.0.0.5#8080#c1#DEFAULT_GROUP@@orders");
  }

  @Test
  void missingFieldsTakeNacosDefaults() throws Exception {
    Instance i = NacosMapping.instance(json("{\"ip\":\"10.0.0.5\",\"port\":80}"));
    assertThat(i.weight()).isEqualTo(1.0);
    assertThat(i.healthy()).isTrue();
    assertThat(i.enabled()).isTrue();
    assertThat(i.ephemeral()).isTrue();
    assertThat(i.cluster()).isEqualTo("DEFAULT");
    assertThat(i.metadata()).isEmpty();
  }

  @Test
  void badInstancesAreRefusedNamingFieldValueAndLimit() throws Exception {
    assertThatThrownBy(() -> NacosMapping.instance(json("{\"ip\":\"10.0.0.5\",\"port\":80,\"weight\":20000}")))
        .hasMessage("instance.weight: 20000.0 (expected: 0..10000)");
    assertThatThrownBy(() -> NacosMapping.instance(json("{\"ip\":\"10.0.0.5\",\"port\":70000}")))
        .hasMessage("instance.port: 70000 (expected: 1..65535)");
    assertThatThrownBy(() -> NacosMapping.instance(json("{\"ip\":\"10.0.0.5\",\"port\":\"eighty\"}")))
        .hasMessageStartingWith("instance.port: \"eighty\"");
    assertThatThrownBy(() -> NacosMapping.instance(null)).hasMessageStartingWith("instance: ");
  }

  /** Nacos's {@code Instance}: every field the client reads, the grouped service name, the heartbeat defaults. */
  @Test
  void writesNacosInstanceJson() {
    ServiceKey svc = new ServiceKey("public", "DEFAULT_GROUP", "orders");
    Instance i = new Instance("10.0.0.5", 8080, 1.0, true, true, true, "DEFAULT", Map.of(), "").withId(svc);
    assertThat(NacosMapping.instanceJson(i, svc).toString()).isEqualTo("{\"instanceId\":\"10.0.0.5#8080#DEFAULT#"
        + "DEFAULT_GROUP@@orders\",\"ip\":\"10.0.0.5\",\"port\":8080,\"weight\":1.0,\"healthy\":true,\"enabled\":true,"
        + "\"ephemeral\":true,\"clusterName\":\"DEFAULT\",\"serviceName\":\"DEFAULT_GROUP@@orders\",\"metadata\":{},"
        + "\"instanceHeartBeatInterval\":5000,\"instanceHeartBeatTimeOut\":15000,\"ipDeleteTimeout\":30000,"
        + "\"instanceIdGenerator\":\"simple\"}");
  }

  /** Nacos's {@code ServiceInfo}: name without the group, groupName, cacheMillis 10000, lastRefTime = the revision's ms. */
  @Test
  void writesNacosServiceInfoJson() {
    ServiceKey svc = new ServiceKey("public", "shop", "orders");
    Instance i = new Instance("10.0.0.5", 8080, 1.0, true, true, true, "c1", Map.of("k", "v"), "").withId(svc);
    ServiceSnapshot s = ServiceSnapshot.of(svc, List.of(i), 1_700_000_000_123_456L);
    JsonNode info = NacosMapping.serviceInfo(s, Set.of());
    assertThat(info.get("name").asText()).isEqualTo("orders");
    assertThat(info.get("groupName").asText()).isEqualTo("shop");
    assertThat(info.get("clusters").asText()).isEmpty();
    assertThat(info.get("cacheMillis").asLong()).isEqualTo(10_000);
    assertThat(info.get("lastRefTime").asLong()).isEqualTo(1_700_000_000_123L);
    assertThat(info.get("checksum").asText()).isEqualTo(s.checksum());
    assertThat(info.get("allIPs").asBoolean()).isFalse();
    assertThat(info.get("reachProtectionThreshold").asBoolean()).isFalse();
    assertThat(info.get("valid").asBoolean()).isTrue();
    assertThat(info.get("hosts")).hasSize(1);
    assertThat(info.get("hosts").get(0).get("serviceName").asText()).isEqualTo("shop@@orders");
    assertThat(info.get("hosts").get(0).get("metadata").get("k").asText()).isEqualTo("v");
    assertThat(NacosMapping.serviceInfo(s, Set.of("b", "a")).get("clusters").asText()).isEqualTo("a,b");
  }

  @Test
  void clustersListsAreSplitAndValidated() {
    assertThat(NacosMapping.clusters("")).isEmpty();
    assertThat(NacosMapping.clusters(null)).isEmpty();
    assertThat(NacosMapping.clusters("a, b,,c")).containsExactlyInAnyOrder("a", "b", "c");
    assertThatThrownBy(() -> NacosMapping.clusters("a b")).hasMessageStartingWith("clusters: \"a b\"");
  }

  /** ServerCheckResponse and ErrorResponse as the client parses them; type in the metadata. */
  @Test
  void responsesCarryTheBaseFields() {
    Payload ok = Envelope.response("HealthCheckResponse");
    assertThat(ok.getMetadata().getType()).isEqualTo("HealthCheckResponse");
    assertThat(ok.getBody().getTypeUrl()).isEmpty();
    assertThat(body(ok).toString()).isEqualTo("{\"resultCode\":200,\"errorCode\":0,\"success\":true}");
    Payload error = Envelope.error(301, "Connection is unregistered.");
    assertThat(error.getMetadata().getType()).isEqualTo("ErrorResponse");
    assertThat(body(error).toString()).isEqualTo(
        "{\"resultCode\":500,\"errorCode\":301,\"message\":\"Connection is unregistered.\",\"success\":false}");
  }

  /** A push: requestId is the revision in decimal, namespace/serviceName/groupName left out, one encoding shared. */
  @Test
  void aPushIsANotifySubscriberRequest() {
    ServiceKey svc = new ServiceKey("public", "DEFAULT_GROUP", "orders");
    PushPayload p = new PushPayload(ServiceSnapshot.of(svc, List.of(), 1234567));
    Payload encoded = (Payload) p.encoded(NacosConnection.ENCODER);
    assertThat(p.encoded(NacosConnection.ENCODER)).isSameAs(encoded);
    assertThat(encoded.getMetadata().getType()).isEqualTo("NotifySubscriberRequest");
    JsonNode body = body(encoded);
    assertThat(body.get("headers").isEmpty()).isTrue();
    assertThat(body.get("requestId").asText()).isEqualTo("1234567");
    assertThat(body.get("module").asText()).isEqualTo("naming");
    assertThat(body.has("namespace")).isFalse();
    assertThat(body.get("serviceInfo").get("name").asText()).isEqualTo("orders");
    assertThat(body.get("serviceInfo").get("hosts")).isEmpty();
  }

  @Test
  void refusalsNameTheType() {
    assertThat(NacosService.refusal("InstanceRequest", "naming")).isNull();
    assertThat(NacosService.refusal("PersistentInstanceRequest", "naming")).isNull();
    assertThat(NacosService.refusal("ConfigQueryRequest", "config")).contains("naming registry")
        .contains("ConfigQueryRequest");
    assertThat(NacosService.refusal("ServiceListRequest", "naming")).isNull();
    assertThat(NacosService.refusal("ServerLoaderInfoRequest", "internal")).contains("ServerLoaderInfoRequest");
  }
}
