package io.roster.server.nacos;

import static io.roster.server.nacos.NacosConn.WAIT;
import static io.roster.server.nacos.NacosConn.register;
import static io.roster.server.nacos.NacosConn.subscribe;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.roster.proto.nacos.Payload;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A Nacos connection's life on a real loopback socket: silent-client detection
 * ({@code ClientDetectionRequest}), {@code ConnectResetRequest} when the server asks it to move
 * (its instances kept for the client's redo), and a stopping server turning clients away.
 */
class NacosConnectionLifecycleTest {

  private static final Duration PROBE_AFTER = TestTime.millis(400);
  private static final Duration ANSWER_WITHIN = TestTime.millis(400);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.keepaliveTime(PROBE_AFTER)
      .keepaliveTimeout(ANSWER_WITHIN)).startedByTest();

  private List<String> registered(String service) {
    return loopback.server().registry().snapshot(ServiceKey.of("", "", service)).instances().stream()
        .map(i -> i.ip() + ":" + i.port()).toList();
  }

  private static JsonNode body(Payload p) {
    return Envelope.body(p);
  }

  /**
   * A connection that says nothing is probed after --keepalive-time; one that answers stays,
   * one that does not is ended after --keepalive-time + --keepalive-timeout and its instance goes.
   */
  @Test
  void aSilentConnectionIsProbedAndEndedUnlessItAnswers() {
    loopback.start();
    NacosConn answers = new NacosConn(loopback).setup();
    answers.call("InstanceRequest", register("orders", "10.0.0.1", 80));
    NacosConn silent = new NacosConn(loopback).setup();
    silent.answerDetection = false;
    silent.call("InstanceRequest", register("orders", "10.0.0.2", 80));
    assertThat(registered("orders")).containsExactly("10.0.0.1:80", "10.0.0.2:80");

    await().atMost(WAIT).until(() -> registered("orders").size() == 1);

    assertThat(registered("orders")).containsExactly("10.0.0.1:80");
    assertThat(silent.ofType("ClientDetectionRequest")).isNotEmpty();
    await().atMost(WAIT).until(() -> silent.streamEnded);
    // The answering one was probed too (it sent nothing else), and is still registered.
    assertThat(answers.ofType("ClientDetectionRequest")).isNotEmpty()
        .allSatisfy(r -> assertThat(r.get("module").asText()).isEqualTo("internal"));
    assertThat(answers.streamEnded).isFalse();
  }

  /**
   * Asked to move, a connection gets ConnectResetRequest naming the server (its Nacos HTTP port:
   * client port - 1000). The client drops the old connection before it redoes its registration
   * on the new one: the instance stays meanwhile, the redo takes it over, and the subscriber
   * never sees it go.
   */
  @Test
  void aConnectionAskedToMoveKeepsItsInstanceForTheRedo() {
    loopback.start(b -> b.keepaliveTime(Duration.ofSeconds(4)).keepaliveTimeout(Duration.ofSeconds(5)));
    NacosConn provider = new NacosConn(loopback).setup();
    String id = body(provider.call("ServerCheckRequest", "{}")).get("connectionId").asText();
    provider.call("InstanceRequest", register("orders", "10.0.0.1", 80));
    NacosConn consumer = new NacosConn(loopback).setup();
    consumer.call("SubscribeServiceRequest", subscribe("orders", true));
    await().atMost(WAIT).until(() -> !consumer.pushes().isEmpty());

    String target = "127.0.0.1:" + loopback.port();
    assertThat(loopback.server().askToMove(id, target, "test")).isTrue();

    await().atMost(WAIT).until(() -> !provider.ofType("ConnectResetRequest").isEmpty());
    JsonNode reset = provider.ofType("ConnectResetRequest").get(0);
    assertThat(reset.get("serverIp").asText()).isEqualTo("127.0.0.1");
    assertThat(reset.get("serverPort").asText()).isEqualTo(Integer.toString(loopback.port() - 1000));
    assertThat(reset.get("connectionId").asText()).isEqualTo(id);
    int sessionsBefore = loopback.server().sessions().count();

    provider.channel.shutdownNow();
    await().atMost(WAIT).until(() -> loopback.server().sessions().count() == sessionsBefore - 1);
    assertThat(registered("orders")).containsExactly("10.0.0.1:80");

    NacosConn moved = new NacosConn(loopback).setup();
    String newId = body(moved.call("ServerCheckRequest", "{}")).get("connectionId").asText();
    moved.call("InstanceRequest", register("orders", "10.0.0.1", 80));
    ServiceKey orders = ServiceKey.of("", "", "orders");
    assertThat(loopback.server().registry().ownerOf(orders, new InstanceKey("10.0.0.1", 80, "DEFAULT")).id())
        .isEqualTo(newId);
    assertThat(consumer.pushes()).allSatisfy(p -> assertThat(p.get("serviceInfo").get("hosts")).hasSize(1));
  }

  /**
   * A stopping standalone server asks its Nacos connections to move (no server named: the
   * client's next one) but does not wait for them (it has nowhere to send them): it stops long
   * before its grace is over, ending the connection that stayed.
   */
  @Test
  void aStoppingStandaloneServerAsksConnectionsToMoveWithoutWaitingForThem() throws Exception {
    loopback.start(b -> b.shutdownGrace(TestTime.seconds(30)));
    NacosConn c = new NacosConn(loopback).setup();
    c.call("InstanceRequest", register("orders", "10.0.0.1", 80));

    Thread closing = loopback.closeInBackground();

    await().atMost(WAIT).until(() -> !c.ofType("ConnectResetRequest").isEmpty());
    assertThat(c.ofType("ConnectResetRequest").get(0).has("serverIp")).isFalse();
    closing.join(WAIT.toMillis());
    assertThat(closing.isAlive()).as("stopped within 10 s of a 30 s grace").isFalse();
    await().atMost(WAIT).until(() -> c.streamEnded);
  }
}
