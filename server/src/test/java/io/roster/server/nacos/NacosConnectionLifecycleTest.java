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
 * ({@code ClientDetectionRequest}).
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
}
