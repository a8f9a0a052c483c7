package io.roster.server.nacos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.grpc.ManagedChannel;
import io.grpc.stub.StreamObserver;
import io.roster.proto.nacos.BiRequestStreamGrpc;
import io.roster.proto.nacos.Metadata;
import io.roster.proto.nacos.Payload;
import io.roster.proto.nacos.RequestGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Drain;
import io.roster.proto.v1.DrainSummary;
import io.roster.proto.v1.Result;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Nacos 2.x envelope on Roster's port, spoken by hand (raw stubs, real loopback socket):
 * handshake, the connection found through the transport, errors, pushes and their acks.
 */
class NacosProtocolTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private static final Duration WAIT = TestTime.seconds(10);

  private static String type(Payload p) {
    return NacosConn.type(p);
  }

  private static Payload payload(String type, String json) {
    return NacosConn.payload(type, json);
  }

  private static String register(String service, String ip, int port) {
    return NacosConn.register(service, ip, port);
  }

  private static String subscribe(String service, boolean on) {
    return NacosConn.subscribe(service, on);
  }

  private static JsonNode body(Payload p) {
    return Envelope.body(p);
  }



  private List<String> registered(String service) {
    return loopback.server().registry().snapshot(ServiceKey.of("", "", service)).instances().stream()
        .map(i -> i.ip() + ":" + i.port()).toList();
  }

  @Test
  void serverCheckNeedsNoConnectionAndNamesTheTransportsId() {
    NacosConn c = new NacosConn(loopback);
    Payload r = c.call("ServerCheckRequest", "{\"headers\":{},\"module\":\"internal\"}");
    assertThat(type(r)).isEqualTo("ServerCheckResponse");
    JsonNode b = body(r);
    assertThat(b.get("resultCode").asInt()).isEqualTo(200);
    assertThat(b.get("supportAbilityNegotiation").asBoolean()).isTrue();
    String id = b.get("connectionId").asText();
    assertThat(id).isNotEmpty();
    // Same transport, same id; another channel is another connection.
    assertThat(body(c.call("ServerCheckRequest", "{}")).get("connectionId").asText()).isEqualTo(id);
    assertThat(body(new NacosConn(loopback).call("ServerCheckRequest", "{}")).get("connectionId").asText()).isNotEqualTo(id);
  }

  @Test
  void aNamingRequestBeforeSetupIsUnregistered301() {
    Payload r = new NacosConn(loopback).call("InstanceRequest", register("orders", "10.0.0.1", 80));
    assertThat(type(r)).isEqualTo("ErrorResponse");
    assertThat(body(r).get("errorCode").asInt()).isEqualTo(301);
    assertThat(registered("orders")).isEmpty();
  }

  @Test
  void setupIsAckedAndHealthChecksAnswered() {
    NacosConn c = new NacosConn(loopback).setup();
    JsonNode ack = body(c.received.stream().filter(p -> type(p).equals("SetupAckRequest")).findFirst().orElseThrow());
    assertThat(ack.get("abilityTable").get("supportPersistentInstanceByGrpc").asBoolean()).isTrue();
    assertThat(ack.get("module").asText()).isEqualTo("internal");
    Payload r = c.call("HealthCheckRequest", "{\"headers\":{},\"module\":\"internal\"}");
    assertThat(type(r)).isEqualTo("HealthCheckResponse");
    assertThat(body(r).get("success").asBoolean()).isTrue();
  }

  @Test
  void unknownAndUnsupportedTypesGetAnErrorNamingTheType() {
    NacosConn c = new NacosConn(loopback).setup();
    Payload config = c.call("ConfigQueryRequest", "{\"headers\":{},\"dataId\":\"d\",\"module\":\"config\"}");
    assertThat(body(config).get("message").asText()).contains("naming registry").contains("ConfigQueryRequest");
    Payload unknown = c.call("NoSuchRequest", "{}");
    assertThat(body(unknown).get("errorCode").asInt()).isEqualTo(302);
    assertThat(body(unknown).get("message").asText()).contains("NoSuchRequest");
    Payload notJson = c.call("InstanceRequest", "{not json");
    assertThat(body(notJson).get("errorCode").asInt()).isEqualTo(400);
    assertThat(body(notJson).get("message").asText()).contains("InstanceRequest").contains("not JSON");
  }

  /**
   * PersistentInstanceRequest (the ability the server advertises): the instance belongs to no
   * connection, so it stays when the connection that registered it closes, and goes when any
   * connection deregisters it. An ephemeral instance may not join its service.
   */
  @Test
  void persistentInstancesOutliveTheConnectionThatRegisteredThem() {
    NacosConn c = new NacosConn(loopback).setup();
    Payload r = c.call("PersistentInstanceRequest", register("databases", "10.0.0.5", 5432));
    assertThat(type(r)).as(body(r).toString()).isEqualTo("InstanceResponse");
    assertThat(body(r).get("type").asText()).isEqualTo("registerInstance");
    io.roster.server.model.ServiceKey key = io.roster.server.model.ServiceKey.of("public", "DEFAULT_GROUP", "databases");
    var stored = loopback.server().registry().instance(key, new io.roster.server.model.InstanceKey("10.0.0.5", 5432,
        "DEFAULT"));
    assertThat(stored).isNotNull();
    assertThat(stored.ephemeral()).isFalse();

    Payload mixed = c.call("InstanceRequest", register("databases", "10.0.0.6", 5432));
    assertThat(type(mixed)).isEqualTo("ErrorResponse");
    assertThat(body(mixed).get("message").asText()).contains("has persistent instances")
        .contains("either ephemeral or persistent");
    c.channel.shutdownNow();
    await().atMost(WAIT).until(() -> loopback.server().sessions().count() == 0);

    NacosConn other = new NacosConn(loopback).setup();
    assertThat(loopback.server().registry().snapshot(key).instances()).hasSize(1);
    Payload gone = other.call("PersistentInstanceRequest", register("databases", "10.0.0.5", 5432)
        .replace("registerInstance", "deregisterInstance"));
    assertThat(type(gone)).as(body(gone).toString()).isEqualTo("InstanceResponse");
    assertThat(loopback.server().registry().snapshot(key).instances()).isEmpty();

    // Spring Cloud Alibaba deregisters with an ephemeral InstanceRequest: it finds the persistent one too.
    assertThat(type(other.call("PersistentInstanceRequest", register("databases", "10.0.0.5", 5432))))
        .isEqualTo("InstanceResponse");
    Payload plain = other.call("InstanceRequest", register("databases", "10.0.0.5", 5432)
        .replace("registerInstance", "deregisterInstance"));
    assertThat(type(plain)).as(body(plain).toString()).isEqualTo("InstanceResponse");
    assertThat(loopback.server().registry().snapshot(key).instances()).isEmpty();
  }

  /** One instance per connection and service; deregister removes it whatever ip/port it names. */
  @Test
  void registerReplacesAndDeregisterRemovesTheConnectionsInstance() {
    NacosConn c = new NacosConn(loopback).setup();
    Payload r = c.call("InstanceRequest", register("orders", "10.0.0.1", 80));
    assertThat(type(r)).isEqualTo("InstanceResponse");
    assertThat(body(r).get("type").asText()).isEqualTo("registerInstance");
    assertThat(registered("orders")).containsExactly("10.0.0.1:80");
    c.call("InstanceRequest", register("orders", "10.0.0.2", 81));
    assertThat(registered("orders")).containsExactly("10.0.0.2:81");
    Payload d = c.call("InstanceRequest", register("orders", "10.0.0.99", 1).replace("registerInstance",
        "deregisterInstance"));
    assertThat(body(d).get("type").asText()).isEqualTo("deregisterInstance");
    assertThat(registered("orders")).isEmpty();
  }

  @Test
  void subscribeAnswersTheStateThenPushesChanges() {
    NacosConn provider = new NacosConn(loopback).setup();
    provider.call("InstanceRequest", register("orders", "10.0.0.1", 80));
    NacosConn consumer = new NacosConn(loopback).setup();
    Payload r = consumer.call("SubscribeServiceRequest", subscribe("orders", true));
    assertThat(type(r)).isEqualTo("SubscribeServiceResponse");
    assertThat(body(r).get("serviceInfo").get("hosts")).hasSize(1);

    new NacosConn(loopback).setup().call("InstanceRequest", register("orders", "10.0.0.2", 80));
    await().atMost(WAIT).until(() -> !consumer.pushes().isEmpty()
        && consumer.pushes().get(consumer.pushes().size() - 1).get("serviceInfo").get("hosts").size() == 2);
    // Push ids only grow.
    List<Long> ids = consumer.pushes().stream().map(p -> p.get("requestId").asLong()).toList();
    assertThat(ids).isSorted();

    Payload q = consumer.call("ServiceQueryRequest", "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":"
        + "\"orders\",\"groupName\":\"DEFAULT_GROUP\",\"cluster\":\"\",\"healthyOnly\":true,\"module\":\"naming\"}");
    assertThat(type(q)).isEqualTo("QueryServiceResponse");
    assertThat(body(q).get("serviceInfo").get("hosts")).hasSize(2);
  }

  /** {@code ""} and {@code public} are one namespace, as Nacos 3 treats them: a registration in one is seen in the other. */
  @Test
  void theEmptyNamespaceIsPublic() {
    NacosConn provider = new NacosConn(loopback).setup();
    provider.call("InstanceRequest", register("either", "10.0.0.1", 80).replace("\"namespace\":\"public\"",
        "\"namespace\":\"\""));
    NacosConn consumer = new NacosConn(loopback).setup();
    Payload q = consumer.call("ServiceQueryRequest", "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":"
        + "\"either\",\"groupName\":\"DEFAULT_GROUP\",\"cluster\":\"\",\"healthyOnly\":false,\"module\":\"naming\"}");
    assertThat(body(q).get("serviceInfo").get("hosts")).hasSize(1);
    assertThat(registered("either")).containsExactly("10.0.0.1:80");
  }

  /** The transport's end removes the connection's instances, and subscribers are pushed. */
  @Test
  void theTransportsEndRemovesWhatTheConnectionOwned() {
    NacosConn provider = new NacosConn(loopback).setup();
    provider.call("InstanceRequest", register("orders", "10.0.0.1", 80));
    NacosConn consumer = new NacosConn(loopback).setup();
    consumer.call("SubscribeServiceRequest", subscribe("orders", true));
    assertThat(registered("orders")).containsExactly("10.0.0.1:80");

    provider.channel.shutdownNow();

    await().atMost(WAIT).until(() -> registered("orders").isEmpty());
    await().atMost(WAIT).until(() -> consumer.pushes().get(consumer.pushes().size() - 1)
        .get("serviceInfo").get("hosts").isEmpty());
  }

  /**
   * NotifySubscriberResponse is the ack: a Roster provider's drain counts the Nacos subscriber
   * that acked as acked and the one that does not as timed out.
   */
  @Test
  void nacosSubscribersAcksCountInADrain() throws Exception {
    TestSession provider = loopback.session("provider");
    assertThat(provider.register("pay", "10.0.0.1", 80).getOk()).isTrue();
    NacosConn acking = new NacosConn(loopback).setup();
    acking.call("SubscribeServiceRequest", subscribe("pay", true));
    NacosConn silent = new NacosConn(loopback).setup();
    silent.ackPushes = false;
    silent.call("SubscribeServiceRequest", subscribe("pay", true));
    await().atMost(WAIT).until(() -> !acking.pushes().isEmpty() && !silent.pushes().isEmpty());

    Duration timeout = TestTime.millis(1_000);
    Result r = CompletableFuture.supplyAsync(() -> provider.request(ClientFrame.newBuilder()
        .setDrain(Drain.newBuilder().setTimeoutMs(timeout.toMillis())))).get(WAIT.toMillis(), TimeUnit.MILLISECONDS);

    assertThat(r.getOk()).isTrue();
    assertThat(r.getDrain()).isEqualTo(DrainSummary.newBuilder().setNotified(2).setAcked(1).setTimedOut(1).build());
  }

  @Test
  void badInputIsAnErrorNamingFieldValueAndLimit() {
    NacosConn c = new NacosConn(loopback).setup();
    Payload r = c.call("InstanceRequest", register("orders", "10.0.0.1", 70000));
    assertThat(type(r)).isEqualTo("ErrorResponse");
    assertThat(body(r).get("errorCode").asInt()).isEqualTo(400);
    assertThat(body(r).get("message").asText()).isEqualTo("InstanceRequest: instance.port: 70000 (expected: 1..65535)");
    Payload g = c.call("SubscribeServiceRequest", subscribe("orders", true).replace("DEFAULT_GROUP", "bad group"));
    assertThat(body(g).get("message").asText()).startsWith("SubscribeServiceRequest: groupName: \"bad group\"");
  }

  @Test
  void aSetupThatIsRefusedEndsTheStreamSayingWhy() throws Exception {
    NacosConn c = new NacosConn(loopback);
    Throwable t = setupEnding(c, "{\"labels\":{\"\":\"empty key\"},\"abilityTable\":{}}");
    assertThat(io.grpc.Status.fromThrowable(t).getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
    assertThat(io.grpc.Status.fromThrowable(t).getDescription()).startsWith("ConnectionSetupRequest: labels key");
    assertThat(body(c.call("HealthCheckRequest", "{}")).get("errorCode").asInt()).isEqualTo(301);
  }

  /**
   * A Nacos setup gets the checks every protocol's hello gets (decision 24): a client version
   * with a line break, which would forge a line of the server's log, is refused naming the field.
   */
  @Test
  void aSetupGetsTheChecksOfEveryHello() throws Exception {
    Throwable t = setupEnding(new NacosConn(loopback),
        "{\"clientVersion\":\"Nacos-Java-Client:v2.5.1\\nINFO forged\",\"labels\":{},\"abilityTable\":{}}");
    assertThat(io.grpc.Status.fromThrowable(t).getCode()).isEqualTo(io.grpc.Status.Code.INVALID_ARGUMENT);
    assertThat(io.grpc.Status.fromThrowable(t).getDescription())
        .startsWith("ConnectionSetupRequest: clientVersion: \"Nacos-Java-Client:v2.5.1")
        .contains("(expected: at most 64 printable characters)");
    assertThat(loopback.server().sessions().count()).as("nothing opened").isZero();
  }

  /** Sends a ConnectionSetupRequest with {@code json} on a new stream; returns how the stream ended (null: completed). */
  private static Throwable setupEnding(NacosConn c, String json) throws Exception {
    CompletableFuture<Throwable> ended = new CompletableFuture<>();
    StreamObserver<Payload> stream = BiRequestStreamGrpc.newStub(c.channel).requestBiStream(new StreamObserver<>() {
      @Override
      public void onNext(Payload p) {}

      @Override
      public void onError(Throwable t) {
        ended.complete(t);
      }

      @Override
      public void onCompleted() {
        ended.complete(null);
      }
    });
    stream.onNext(payload("ConnectionSetupRequest", json));
    return ended.get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Test
  void unsubscribeOfWhatWasNotSubscribedSucceeds() {
    NacosConn c = new NacosConn(loopback).setup();
    Payload r = c.call("SubscribeServiceRequest", subscribe("orders", false));
    assertThat(type(r)).isEqualTo("SubscribeServiceResponse");
    assertThat(body(r).get("success").asBoolean()).isTrue();
  }

  private static String listServices(String group, int pageNo, int pageSize) {
    return "{\"headers\":{},\"namespace\":\"public\",\"serviceName\":\"\",\"groupName\":\"" + group
        + "\",\"pageNo\":" + pageNo + ",\"pageSize\":" + pageSize + ",\"module\":\"naming\"}";
  }

  /**
   * ServiceListRequest: the group's services only, sorted, names without {@code group@@},
   * {@code count} the group's total; a page past the end is empty; the selector is ignored.
   */
  @Test
  void serviceListPagesTheGroupsServiceNames() {
    NacosConn c = new NacosConn(loopback).setup();
    for (String name : List.of("c", "a", "b")) {
      new NacosConn(loopback).setup().call("InstanceRequest", register(name, "10.0.0.1", 80));
    }
    new NacosConn(loopback).setup().call("InstanceRequest", register("other@@x", "10.0.0.1", 80));

    JsonNode first = body(c.call("ServiceListRequest", listServices("DEFAULT_GROUP", 1, 2)));
    assertThat(first.get("count").asInt()).isEqualTo(3);
    assertThat(first.get("serviceNames")).extracting(JsonNode::asText).containsExactly("a", "b");
    Payload second = c.call("ServiceListRequest", listServices("DEFAULT_GROUP", 2, 2)
        .replace("\"module\"", "\"selector\":\"{\\\"type\\\":\\\"label\\\",\\\"expression\\\":\\\"x\\\"}\",\"module\""));
    assertThat(type(second)).isEqualTo("ServiceListResponse");
    assertThat(body(second).get("serviceNames")).extracting(JsonNode::asText).containsExactly("c");
    assertThat(body(c.call("ServiceListRequest", listServices("DEFAULT_GROUP", 3, 2))).get("serviceNames")).isEmpty();
    // Spring Cloud Alibaba's getServices(): page 1 of Integer.MAX_VALUE; and a page far past the end.
    assertThat(body(c.call("ServiceListRequest", listServices("other", 1, Integer.MAX_VALUE))).get("serviceNames"))
        .extracting(JsonNode::asText).containsExactly("x");
    JsonNode far = body(c.call("ServiceListRequest", listServices("DEFAULT_GROUP", 5, Integer.MAX_VALUE)));
    assertThat(far.get("count").asInt()).isEqualTo(3);
    assertThat(far.get("serviceNames")).isEmpty();
  }

  @Test
  void serviceListRefusesABadPageNamingFieldValueAndLimit() {
    NacosConn c = new NacosConn(loopback).setup();
    Payload zero = c.call("ServiceListRequest", listServices("DEFAULT_GROUP", 0, 10));
    assertThat(type(zero)).isEqualTo("ErrorResponse");
    assertThat(body(zero).get("errorCode").asInt()).isEqualTo(400);
    assertThat(body(zero).get("message").asText())
        .isEqualTo("ServiceListRequest: pageNo: 0 (expected: a page number from 1)");
    assertThat(body(c.call("ServiceListRequest", listServices("DEFAULT_GROUP", 1, -1))).get("message").asText())
        .isEqualTo("ServiceListRequest: pageSize: -1 (expected: 1..2147483647)");
    assertThat(body(c.call("ServiceListRequest", listServices("bad group", 1, 1))).get("message").asText())
        .startsWith("ServiceListRequest: groupName: \"bad group\"");
  }
}
