package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/protocol.md, "Reconnecting": a reconnecting client redoes its registrations on the new session
 * before the old one ends. When the redone set equals what the old session had, subscribers
 * see nothing at all: no new revision, no push, not even when the old session ends.
 */
class RedoTest {

  private static final ServiceKey ORDERS = ServiceKey.of("public", "DEFAULT_GROUP", "orders");

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults();

  private static Instance.Builder instance() {
    return Instance.newBuilder().setIp("10.0.0.7").setPort(8080).putMetadata("zone", "eu-1a");
  }

  @Test
  void anIdenticalRedoMakesNoRevisionAndNoPushAndTheOldSessionsEndRemovesNothing() {
    TestSession old = loopback.session("provider");
    assertThat(old.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders")).setInstance(instance()))).getOk()).isTrue();
    TestSession consumer = loopback.session("consumer");
    consumer.subscribe("orders");
    long revision = consumer.awaitPush("orders", i -> i.getInstancesCount() == 1).getRevision();

    TestSession fresh = loopback.session("provider");
    assertThat(fresh.request(ClientFrame.newBuilder().setBatchRegister(BatchRegisterInstances.newBuilder()
        .setService(TestSession.key("orders")).addInstances(instance()))).getOk()).isTrue();
    old.cancel();
    await().atMost(TestTime.seconds(10)).until(() -> loopback.server().sessions().count() == 2);

    assertThat(loopback.server().registry().snapshot(ORDERS).revision()).isEqualTo(revision);
    assertThat(loopback.server().registry().snapshot(ORDERS).instances()).hasSize(1);
    consumer.drainFrames();
    Duration quiet = TestTime.millis(500);
    await().during(quiet).atMost(quiet.multipliedBy(3))
        .until(() -> consumer.drainFrames().stream().noneMatch(ServerFrame::hasPush));
    assertThat(loopback.server().sessions().all()).filteredOn(s -> s.info().clientId().equals("provider"))
        .singleElement().satisfies(s -> assertThat(s.instanceCount()).isEqualTo(1));
  }
}
