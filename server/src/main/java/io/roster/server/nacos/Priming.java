package io.roster.server.nacos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.roster.proto.nacos.Metadata;
import io.roster.proto.nacos.Payload;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.naming.Hellos;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The Nacos protocol's share of the start's priming (see {@link NacosEndpoint#prime()}). */
final class Priming {

  /** What {@link #run} primes: the messages of a Nacos connection's first exchanges, in their order. */
  static final List<String> PRIMED = List.of("ServerCheckRequest", "ConnectionSetupRequest", "SetupAckRequest",
      "SubscribeServiceRequest", "InstanceRequest", "BatchInstanceRequest", "NotifySubscriberResponse");

  private Priming() {}

  /**
   * Reads and maps one message of each kind a connection's first exchanges bring (the envelope
   * from its bytes, with a header, as the transport hands it over), and writes each answer, as
   * the service and the stream do; returns {@link #PRIMED}.
   */
  static List<String> run() {
    parsed(payload("ServerCheckRequest", "{\"headers\":{},\"module\":\"internal\"}"));
    ObjectNode check = NacosMapping.JSON.createObjectNode();
    check.put("connectionId", "roster-primer");
    check.put("supportAbilityNegotiation", true);
    Envelope.response("ServerCheckResponse", check);

    JsonNode setup = Envelope.body(parsed(payload("ConnectionSetupRequest", "{\"headers\":{},\"clientVersion\":"
        + "\"Nacos-Java-Client:v2.5.1\",\"tenant\":\"\",\"labels\":{\"source\":\"sdk\",\"module\":\"naming\","
        + "\"AppName\":\"roster-primer\"},\"abilityTable\":{},\"module\":\"internal\"}")));
    Map<String, String> labels = new HashMap<>();
    setup.path("labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
    new Hellos.Hello("roster-primer", NacosMapping.text(setup, "tenant"), labels.getOrDefault("AppName", "nacos"),
        NacosMapping.text(setup, "clientVersion"), labels, false, 0);
    ObjectNode ack = NacosMapping.JSON.createObjectNode();
    ack.putObject("abilityTable").put("supportPersistentInstanceByGrpc", true);
    Envelope.request("SetupAckRequest", "internal", ack);

    String service = "\"namespace\":\"public\",\"serviceName\":\"roster-primer\",\"groupName\":\"DEFAULT_GROUP\"";
    String instance = "{\"ip\":\"127.0.0.1\",\"port\":1,\"weight\":1.0,\"healthy\":true,\"enabled\":true,"
        + "\"ephemeral\":true,\"clusterName\":\"DEFAULT\",\"metadata\":{\"k\":\"v\"}}";
    var register = Envelope.body(parsed(payload("InstanceRequest", "{\"headers\":{}," + service
        + ",\"type\":\"registerInstance\",\"instance\":" + instance + ",\"module\":\"naming\"}")));
    ServiceKey key = NacosMapping.service(register);
    NacosMapping.text(register, "type");
    NacosMapping.instance(register.get("instance"));
    var batch = Envelope.body(payload("BatchInstanceRequest", "{\"headers\":{}," + service
        + ",\"type\":\"batchRegisterInstance\",\"instances\":[" + instance + "],\"module\":\"naming\"}"));
    NacosMapping.instance(batch.get("instances").get(0));
    var subscribe = Envelope.body(parsed(payload("SubscribeServiceRequest", "{\"headers\":{}," + service
        + ",\"subscribe\":true,\"clusters\":\"\",\"module\":\"naming\"}")));
    NacosMapping.clusters(NacosMapping.text(subscribe, "clusters"));
    Envelope.response("InstanceResponse");
    Envelope.response("SubscribeServiceResponse", NacosMapping.JSON.createObjectNode()
        .set("serviceInfo", NacosMapping.serviceInfo(ServiceSnapshot.of(key, List.of(), 1), Set.of())));

    JsonNode acked = Envelope.body(parsed(payload("NotifySubscriberResponse",
        "{\"resultCode\":200,\"errorCode\":0,\"requestId\":\"1\"}")));
    if (!Long.toHexString(Long.parseLong(NacosMapping.text(acked, "requestId").trim())).equals("1")) {
      throw new IllegalStateException("the primer's own NotifySubscriberResponse names another push");
    }
    return PRIMED;
  }

  /** {@code p} as the transport hands it over: read back from its bytes. */
  private static Payload parsed(Payload p) {
    try {
      return Payload.parseFrom(p.toByteArray());
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalStateException("the primer's own " + Envelope.type(p) + " does not parse", e);
    }
  }

  private static Payload payload(String type, String json) {
    return Payload.newBuilder().setMetadata(Metadata.newBuilder().setType(type).setClientIp("127.0.0.1")
            .putHeaders("roster-primer", "1"))
        .setBody(Any.newBuilder().setValue(ByteString.copyFrom(json, StandardCharsets.UTF_8))).build();
  }
}
