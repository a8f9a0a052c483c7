package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * docs/protocol.md §9: a reconnecting client redoes its registrations on the new session
 * before the old one ends. When the redone set equals what the old session had, subscribers
 * see nothing at all: no new revision, no push, not even when the old session ends.
 */
class RedoTest {

  private static final ServiceKey ORDERS = ServiceKey.of("public", "DEFAULT_GROUP", "orders");

  private RosterServer server;
  private ManagedChannel channel;

  @BeforeEach
  void start() {
    server = RosterServer.start(ServerConfig.builder().host("127.0.0.1").port(0)
        .shutdownGrace(TestTime.seconds(1)).build());
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.close();
  }

  private static Instance.Builder instance() {
    return Instance.newBuilder().setIp("10.0.0.7").setPort(8080).putMetadata("zone", "eu-1a");
  }

  @Test
  void anIdenticalRedoMakesNoRevisionAndNoPushAndTheOldSessionsEndRemovesNothing() {
    TestSession old = new TestSession(channel).hello("provider");
    assertThat(old.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders")).setInstance(instance()))).getOk()).isTrue();
    TestSession consumer = new TestSession(channel).hello("consumer");
    consumer.subscribe("orders");
    long revision = consumer.awaitPush("orders", i -> i.getInstancesCount() == 1).getRevision();

    TestSession fresh = new TestSession(channel).hello("provider");
    assertThat(fresh.request(ClientFrame.newBuilder().setBatchRegister(BatchRegisterInstances.newBuilder()
        .setService(TestSession.key("orders")).addInstances(instance()))).getOk()).isTrue();
    old.cancel();
    await().atMost(TestTime.seconds(10)).until(() -> server.sessions().count() == 2);

    assertThat(server.registry().snapshot(ORDERS).revision()).isEqualTo(revision);
    assertThat(server.registry().snapshot(ORDERS).instances()).hasSize(1);
    consumer.drainFrames();
    Duration quiet = TestTime.millis(500);
    await().during(quiet).atMost(quiet.multipliedBy(3))
        .until(() -> consumer.drainFrames().stream().noneMatch(ServerFrame::hasPush));
    assertThat(server.sessions().all()).filteredOn(s -> s.info().clientId().equals("provider"))
        .singleElement().satisfies(s -> assertThat(s.instanceCount()).isEqualTo(1));
    fresh.close();
    consumer.close();
  }
}
