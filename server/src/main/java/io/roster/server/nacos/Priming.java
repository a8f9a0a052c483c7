package io.roster.server.nacos;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.roster.proto.nacos.Metadata;
import io.roster.proto.nacos.Payload;
import io.roster.server.model.ServiceKey;
import java.nio.charset.StandardCharsets;

/** The Nacos protocol's share of the start's priming (see {@link NacosEndpoint#prime()}). */
final class Priming {

  private Priming() {}

  /** Reads and maps one body of each naming request kind, and writes an answer, as the service does. */
  static void run() {
    String service = "\"namespace\":\"public\",\"serviceName\":\"roster-primer\",\"groupName\":\"DEFAULT_GROUP\"";
    String instance = "{\"ip\":\"127.0.0.1\",\"port\":1,\"weight\":1.0,\"healthy\":true,\"enabled\":true,"
        + "\"ephemeral\":true,\"clusterName\":\"DEFAULT\",\"metadata\":{\"k\":\"v\"}}";
    var register = Envelope.body(payload("InstanceRequest", "{\"headers\":{}," + service
        + ",\"type\":\"registerInstance\",\"instance\":" + instance + ",\"module\":\"naming\"}"));
    ServiceKey key = NacosMapping.service(register);
    NacosMapping.text(register, "type");
    NacosMapping.instance(register.get("instance"));
    var batch = Envelope.body(payload("BatchInstanceRequest", "{\"headers\":{}," + service
        + ",\"type\":\"batchRegisterInstance\",\"instances\":[" + instance + "],\"module\":\"naming\"}"));
    NacosMapping.instance(batch.get("instances").get(0));
    var subscribe = Envelope.body(payload("SubscribeServiceRequest", "{\"headers\":{}," + service
        + ",\"subscribe\":true,\"clusters\":\"\",\"module\":\"naming\"}"));
    NacosMapping.clusters(NacosMapping.text(subscribe, "clusters"));
    Envelope.response("InstanceResponse");
    Envelope.response("SubscribeServiceResponse", NacosMapping.JSON.createObjectNode()
        .set("serviceInfo", NacosMapping.serviceInfo(
            io.roster.server.model.ServiceSnapshot.of(key, java.util.List.of(), 1), java.util.Set.of())));
  }

  private static Payload payload(String type, String json) {
    return Payload.newBuilder().setMetadata(Metadata.newBuilder().setType(type).setClientIp("127.0.0.1"))
        .setBody(Any.newBuilder().setValue(ByteString.copyFrom(json, StandardCharsets.UTF_8))).build();
  }
}
