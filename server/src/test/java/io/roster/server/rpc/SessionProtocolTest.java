package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.Ping;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.Subscribe;
import io.roster.proto.v1.Unsubscribe;
import io.roster.proto.v1.Welcome;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Session frames as docs/protocol.md describes them (from hello to ping), over loopback. */
class SessionProtocolTest {

  private static final Duration ACK_TIMEOUT = TestTime.millis(300);

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.pushAckTimeout(ACK_TIMEOUT));

  private TestSession raw() {
    return loopback.open();
  }

  private TestSession session(String clientId) {
    return raw().hello(clientId);
  }

  private static Result register(TestSession s, String ip, String cluster) {
    return s.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders"))
        .setInstance(Instance.newBuilder().setIp(ip).setPort(80).setCluster(cluster))));
  }

  private static Result subscribe(TestSession s, String... clusters) {
    return s.request(ClientFrame.newBuilder().setSubscribe(Subscribe.newBuilder()
        .setService(TestSession.key("orders")).addAllClusters(List.of(clusters))));
  }

  private static List<String> ips(ServiceInfo info) {
    return info.getInstancesList().stream().map(Instance::getIp).toList();
  }

  @Test
  void aPingBeforeHelloEndsTheStream() throws Exception {
    TestSession s = raw();
    s.send(ClientFrame.newBuilder().setRequestId("1").setPing(Ping.getDefaultInstance()).build());
    Status status = s.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(status.getDescription()).isEqualTo("the first frame must be hello, got ping (request_id \"1\")");
  }

  @Test
  void aPushAckBeforeHelloEndsTheStream() throws Exception {
    TestSession s = raw();
    s.send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId("1f")).build());
    Status status = s.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(status.getDescription()).isEqualTo("the first frame must be hello, got push_ack (request_id \"\")");
  }

  @Test
  void welcomeTellsTheConnectionTheNodeAndTheTimeouts() {
    Welcome first = raw().helloFrame(Hello.newBuilder().setClientId("a")).getWelcome();
    Welcome second = raw().helloFrame(Hello.newBuilder().setClientId("a")).getWelcome();

    assertThat(first.getConnectionId()).isNotEmpty().isNotEqualTo(second.getConnectionId());
    assertThat(first.getNodeId()).matches("127\\.0\\.0\\.1:" + loopback.server().port() + "@[0-9a-z]+")
        .isEqualTo(second.getNodeId());
    assertThat(first.getKeepaliveTimeMs()).isEqualTo(loopback.server().config().sessions().keepaliveTime().toMillis()).isEqualTo(4000);
    assertThat(first.getKeepaliveTimeoutMs()).isEqualTo(5000);
    assertThat(first.getPushAckTimeoutMs()).isEqualTo(ACK_TIMEOUT.toMillis());
    assertThat(first.getServerVersion()).isEqualTo("0.1.0");
    assertThat(first.getFeaturesList()).containsExactly("query", "delta", "credentials");
  }

  @Test
  void pushesShowOnlyTheSubscribedClustersAndAResubscribeReplacesTheFilter() {
    TestSession provider = session("provider");
    TestSession consumer = session("consumer");
    assertThat(subscribe(consumer, "a").getOk()).isTrue();
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);

    register(provider, "10.0.0.1", "b");
    register(provider, "10.0.0.2", "a");
    ServiceInfo onlyA = consumer.awaitPush("orders", i -> i.getInstancesCount() > 0);
    assertThat(ips(onlyA)).containsExactly("10.0.0.2");
    assertThat(consumer.drainFrames()).filteredOn(ServerFrame::hasPush)
        .allSatisfy(f -> assertThat(f.getPush().getServiceInfo().getInstancesList())
            .allSatisfy(i -> assertThat(i.getCluster()).isEqualTo("a")));

    assertThat(subscribe(consumer, "b").getOk()).isTrue();

    ServiceInfo onlyB = consumer.awaitPush("orders", i -> true);
    assertThat(ips(onlyB)).as("the current state through the new filter").containsExactly("10.0.0.1");
    assertThat(onlyB.getRevision()).as("same state, other content").isEqualTo(onlyA.getRevision());
    assertThat(onlyB.getChecksum()).isNotEqualTo(onlyA.getChecksum());
    assertThat(loopback.server().sessions().all()).filteredOn(s -> s.info().clientId().equals("consumer"))
        .singleElement().satisfies(s -> assertThat(s.subscriptionCount()).isEqualTo(1));
  }

  @Test
  void unsubscribeOfAServiceNotSubscribedIsNotFound() {
    TestSession consumer = session("consumer");
    Result r = consumer.request(ClientFrame.newBuilder().setUnsubscribe(Unsubscribe.newBuilder()
        .setService(TestSession.key("orders"))));
    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_NOT_FOUND);
    assertThat(r.getMessage()).contains("not subscribed");
  }

  /** Not acked within the ack timeout: the same push again, until an ack comes. */
  @Test
  void anUnackedPushIsSentAgainUntilItIsAcked() {
    TestSession consumer = session("consumer");
    consumer.autoAck(false);
    subscribe(consumer);
    ServerFrame first = consumer.await(ServerFrame::hasPush);
    long sentAt = System.nanoTime();

    ServerFrame again = consumer.await(ServerFrame::hasPush);

    assertThat(System.nanoTime() - sentAt).as("after the ack timeout").isGreaterThanOrEqualTo(
        ACK_TIMEOUT.toNanos() - Duration.ofMillis(50).toNanos());
    assertThat(again.getPush().getPushId()).isEqualTo(first.getPush().getPushId());
    assertThat(again.getPush().getServiceInfo()).isEqualTo(first.getPush().getServiceInfo());

    consumer.send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder()
        .setPushId(first.getPush().getPushId())).build());
    consumer.ping();
    consumer.drainFrames();
    await().during(ACK_TIMEOUT.multipliedBy(3)).atMost(ACK_TIMEOUT.multipliedBy(5))
        .until(() -> consumer.drainFrames().stream().noneMatch(ServerFrame::hasPush));
    assertThat(loopback.server().sessions().all()).filteredOn(s -> s.info().clientId().equals("consumer"))
        .singleElement().satisfies(s -> assertThat(s.unackedPushes()).isZero());
  }

  /** Unsubscribe drops what was still waiting for this session, the re-send included. */
  @Test
  void unsubscribeDropsThePushStillWaitingForTheSession() {
    TestSession consumer = session("consumer");
    consumer.autoAck(false);
    subscribe(consumer);
    consumer.await(ServerFrame::hasPush);

    Result r = consumer.request(ClientFrame.newBuilder().setUnsubscribe(Unsubscribe.newBuilder()
        .setService(TestSession.key("orders"))));
    assertThat(r.getOk()).isTrue();

    consumer.drainFrames();
    await().during(ACK_TIMEOUT.multipliedBy(3)).atMost(ACK_TIMEOUT.multipliedBy(5))
        .until(() -> consumer.drainFrames().stream().noneMatch(ServerFrame::hasPush));
    assertThat(loopback.server().sessions().all()).filteredOn(s -> s.info().clientId().equals("consumer"))
        .singleElement().satisfies(s -> {
          assertThat(s.unackedPushes()).isZero();
          assertThat(s.pendingPushes()).isZero();
          assertThat(s.subscriptionCount()).isZero();
        });
  }

  /**
   * Two services that do not exist are pushed at the same absent revision, so with the same
   * push id: one ack per push clears both (regression, see push.SharedPushIdTest).
   */
  @Test
  void pushesOfTwoAbsentServicesShareAnIdAndAreBothAcked() {
    TestSession consumer = session("consumer");
    consumer.autoAck(false);
    assertThat(consumer.subscribe("absent-1").getOk()).isTrue();
    String first = consumer.await(f -> f.hasPush()).getPush().getPushId();
    assertThat(consumer.subscribe("absent-2").getOk()).isTrue();
    String second = consumer.await(f -> f.hasPush()
        && f.getPush().getServiceInfo().getService().getName().equals("absent-2")).getPush().getPushId();
    assertThat(first).isEqualTo(second);

    for (String id : List.of(first, second)) {
      consumer.send(ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId(id)).build());
    }

    await().atMost(TestTime.seconds(10)).untilAsserted(() -> assertThat(loopback.server().sessions().all())
        .filteredOn(s -> s.info().clientId().equals("consumer"))
        .singleElement().satisfies(s -> assertThat(s.unackedPushes()).isZero()));
  }
}
