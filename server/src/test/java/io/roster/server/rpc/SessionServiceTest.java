package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.DeregisterInstance;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.session.Session;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The Session service over real loopback sockets. */
class SessionServiceTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.maxInstancesPerConnection(3));

  /** A stream on a connection of its own: the instance limit is per connection. */
  private TestSession raw() {
    return loopback.open(loopback.newChannel());
  }

  private TestSession session(String clientId) {
    return raw().hello(clientId);
  }

  @Test
  void registerThenSubscriberIsPushedAndAcks() {
    TestSession consumer = session("consumer");
    assertThat(consumer.subscribe("orders").getOk()).isTrue();
    consumer.awaitPush("orders", info -> info.getInstancesCount() == 0);

    TestSession provider = session("provider");
    assertThat(provider.register("orders", "10.0.0.7", 8080).getOk()).isTrue();

    var info = consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    assertThat(info.getInstances(0).getIp()).isEqualTo("10.0.0.7");
    assertThat(info.getInstances(0).getWeight()).isEqualTo(1.0);
    assertThat(info.getInstances(0).getHealthy()).isTrue();
    assertThat(info.getInstances(0).getEnabled()).isTrue();
    assertThat(info.getInstances(0).getInstanceId()).isEqualTo("10.0.0.7#8080#DEFAULT#DEFAULT_GROUP@@orders");
    assertThat(info.getChecksum()).hasSize(32);
    await().atMost(TestTime.seconds(5)).untilAsserted(() ->
        assertThat(loopback.server().sessions().all()).allSatisfy(s -> assertThat(s.unackedPushes()).isZero()));
  }

  @Test
  void queryOnTheStreamAnswersLikeTheRegistryInTheSessionsNamespace() {
    TestSession provider = session("provider");
    provider.register("orders", "10.0.0.7", 8080);
    TestSession consumer = raw();
    ServerFrame welcome = consumer.helloFrame(Hello.newBuilder().setClientId("consumer"));
    assertThat(welcome.getWelcome().getFeaturesList()).contains("query");

    Result r = consumer.request(ClientFrame.newBuilder().setQuery(QueryInstancesRequest.newBuilder()
        .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName("orders"))));
    assertThat(r.getOk()).isTrue();
    assertThat(r.getQuery().getServiceInfo().getInstancesList()).extracting(Instance::getPort).containsExactly(8080);

    Result same = consumer.request(ClientFrame.newBuilder().setQuery(QueryInstancesRequest.newBuilder()
        .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName("orders"))
        .setKnownChecksum(r.getQuery().getServiceInfo().getChecksum())));
    assertThat(same.getQuery().getNotModified()).isTrue();

    TestSession elsewhere = raw();
    elsewhere.helloFrame(Hello.newBuilder().setClientId("elsewhere").setNamespace("staging"));
    Result empty = elsewhere.request(ClientFrame.newBuilder().setQuery(QueryInstancesRequest.newBuilder()
        .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName("orders"))));
    assertThat(empty.getOk()).isTrue();
    assertThat(empty.getQuery().getServiceInfo().getInstancesCount()).isZero();
    assertThat(empty.getQuery().getServiceInfo().getService().getNamespace()).isEqualTo("staging");
  }

  @Test
  void aBadQueryGetsAnErrorNamingTheFieldAndTheStreamSurvives() {
    TestSession consumer = session("consumer");
    Result bad = consumer.request(ClientFrame.newBuilder().setQuery(QueryInstancesRequest.newBuilder()
        .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName(""))));
    assertThat(bad.getOk()).isFalse();
    assertThat(bad.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_ARGUMENT);
    assertThat(bad.getField()).isEqualTo("service.name");
    assertThat(consumer.subscribe("orders").getOk()).isTrue();
  }

  @Test
  void subscribeIsAnsweredBeforeTheFirstPush() {
    TestSession provider = session("provider");
    provider.register("orders", "10.0.0.7", 8080);
    TestSession consumer = session("consumer");
    String id = consumer.nextId();
    consumer.send(ClientFrame.newBuilder().setRequestId(id)
        .setSubscribe(io.roster.proto.v1.Subscribe.newBuilder().setService(TestSession.key("orders"))).build());
    ServerFrame first = consumer.await(f -> f.hasResult() || f.hasPush());
    assertThat(first.hasResult()).isTrue();
    assertThat(first.getRequestId()).isEqualTo(id);
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
  }

  @Test
  void halfCloseRemovesEverythingAndCompletesTheStream() throws Exception {
    TestSession consumer = session("consumer");
    consumer.subscribe("orders");
    TestSession provider = session("provider");
    provider.register("orders", "10.0.0.7", 8080);
    provider.register("orders", "10.0.0.7", 8081);
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 2);

    provider.halfClose();
    assertThat(provider.awaitClosed().isOk()).isTrue();
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);
    assertThat(loopback.server().sessions().count()).isEqualTo(1);
  }

  @Test
  void cancelRemovesEverything() {
    TestSession consumer = session("consumer");
    consumer.subscribe("orders");
    TestSession provider = session("provider");
    provider.register("orders", "10.0.0.7", 8080);
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);

    provider.cancel();
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);
    await().atMost(TestTime.seconds(5)).until(() -> loopback.server().sessions().count() == 1);
  }

  @Test
  void aBadRequestGetsAnErrorResultAndTheStreamAndStateSurvive() {
    TestSession provider = session("provider");
    assertThat(provider.register("orders", "10.0.0.7", 8080).getOk()).isTrue();

    Result bad = provider.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders"))
        .setInstance(Instance.newBuilder().setIp("10.0.0.8").setPort(8080).setWeight(20000))));
    assertThat(bad.getOk()).isFalse();
    assertThat(bad.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_ARGUMENT);
    assertThat(bad.getField()).isEqualTo("instance.weight");
    assertThat(bad.getMessage()).isEqualTo("instance.weight: 20000.0 (expected: 0..10000)");

    Result badName = provider.register("bad name!", "10.0.0.7", 8080);
    assertThat(badName.getField()).isEqualTo("service.name");
    assertThat(badName.getMessage()).startsWith("service.name: \"bad name!\"");

    Result notMine = provider.request(ClientFrame.newBuilder().setDeregister(DeregisterInstance.newBuilder()
        .setService(TestSession.key("orders")).setInstance(Instance.newBuilder().setIp("10.9.9.9").setPort(1))));
    assertThat(notMine.getCode()).isEqualTo(ErrorCode.ERROR_CODE_NOT_FOUND);

    // Still usable, and what was registered before is intact.
    assertThat(provider.register("orders", "10.0.0.7", 8081).getOk()).isTrue();
    assertThat(loopback.server().registry().snapshot(io.roster.server.model.ServiceKey.of("", "", "orders")).instances())
        .hasSize(2);
  }

  @Test
  void anInstanceTakenOverByAnotherSessionLeavesTheOldOnesBooksAndLimit() {
    TestSession old = session("old");
    for (int port = 1; port <= 3; port++) {
      assertThat(old.register("orders", "10.0.0.7", port).getOk()).isTrue();
    }
    TestSession fresh = session("fresh");
    assertThat(fresh.register("orders", "10.0.0.7", 1).getOk()).isTrue();

    Result gone = old.request(ClientFrame.newBuilder().setDeregister(DeregisterInstance.newBuilder()
        .setService(TestSession.key("orders")).setInstance(Instance.newBuilder().setIp("10.0.0.7").setPort(1))));
    assertThat(gone.getCode()).isEqualTo(ErrorCode.ERROR_CODE_NOT_FOUND);
    assertThat(gone.getMessage()).contains("now registered by another connection");
    assertThat(loopback.server().registry().snapshot(io.roster.server.model.ServiceKey.of("", "", "orders")).instances())
        .as("the new owner's registration stands").hasSize(3);

    fresh.register("orders", "10.0.0.7", 2);
    // The old session owns one instance now, so it may register two more under its limit of 3.
    assertThat(old.register("orders", "10.0.0.8", 1).getOk()).isTrue();
    assertThat(old.register("orders", "10.0.0.8", 2).getOk()).isTrue();
    assertThat(old.register("orders", "10.0.0.8", 3).getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
  }

  @Test
  void perConnectionInstanceLimitIsAClearError() {
    TestSession provider = session("provider");
    for (int port = 1; port <= 3; port++) {
      assertThat(provider.register("orders", "10.0.0.7", port).getOk()).isTrue();
    }
    Result over = provider.register("orders", "10.0.0.7", 4);
    assertThat(over.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(over.getMessage()).contains("would own 4 instances").contains("it owns 3").contains("limit: 3").contains("--max-instances-per-connection");
    // Re-registering an owned instance is not a new one.
    assertThat(provider.register("orders", "10.0.0.7", 3).getOk()).isTrue();
  }

  @Test
  void aFrameBeforeHelloEndsTheStreamWithAStatus() throws Exception {
    TestSession raw = raw();
    raw.send(ClientFrame.newBuilder().setRequestId("1").setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders")).setInstance(Instance.newBuilder().setIp("h").setPort(1))).build());
    Status status = raw.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(status.getDescription()).isEqualTo("the first frame must be hello, got register (request_id \"1\")");
    assertThat(loopback.server().registry().serviceCount()).isZero();
  }

  @Test
  void anEmptyFrameEndsTheStreamWithAStatus() throws Exception {
    TestSession s = session("c");
    s.register("orders", "10.0.0.7", 8080);
    s.send(ClientFrame.newBuilder().setRequestId("9").build());
    Status status = s.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).startsWith("empty frame");
    // The violating session's instances went with it.
    await().atMost(TestTime.seconds(5)).until(() -> loopback.server().registry().serviceCount() == 0);
  }

  @Test
  void aSecondHelloEndsTheStream() throws Exception {
    TestSession s = session("c");
    s.send(ClientFrame.newBuilder().setRequestId("2").setHello(Hello.newBuilder().setClientId("c")).build());
    assertThat(s.awaitClosed().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
  }

  @Test
  void aBadHelloIsAnErrorResultAndAGoodOneCanFollow() {
    TestSession raw = raw();
    Result r = raw.request(ClientFrame.newBuilder().setHello(Hello.newBuilder()));
    assertThat(r.getField()).isEqualTo("hello.client_id");
    raw.hello("fixed");
    assertThat(raw.register("orders", "10.0.0.1", 1).getOk()).isTrue();
  }

  @Test
  void aSubscriberThatNeverReadsIsBoundedAndDoesNotDelayOthers() {
    // Reads the welcome and the subscribe result, then never reads again.
    TestSession stuck = loopback.open(loopback.newChannel(), 2).hello("stuck");
    stuck.send(ClientFrame.newBuilder().setRequestId("s").setSubscribe(
        io.roster.proto.v1.Subscribe.newBuilder().setService(TestSession.key("orders"))).build());
    TestSession healthy = session("healthy");
    healthy.subscribe("orders");

    TestSession provider = session("provider");
    String big = "x".repeat(1000);
    int changes = 300;
    for (int i = 0; i < changes; i++) {
      provider.request(ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
          .setService(TestSession.key("orders"))
          .setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(1).putMetadata("v", i + big))));
    }
    // The healthy subscriber sees the final state.
    healthy.awaitPush("orders", info -> info.getInstancesCount() == 1
        && info.getInstances(0).getMetadataMap().get("v").startsWith((changes - 1) + "x"));
    Session stuckSession = loopback.server().sessions().all().stream()
        .filter(s -> s.info().clientId().equals("stuck")).findFirst().orElseThrow();
    // Per service at most one state waits for the stuck reader, and it was not sent every change.
    assertThat(stuckSession.unackedPushes() + pendingOf(stuckSession)).isLessThanOrEqualTo(2);
  }

  @Test
  void shutdownAsksEverySessionToReconnectAndFinishesWhenTheyLeave() throws Exception {
    TestSession s = session("c");
    s.register("orders", "10.0.0.7", 8080);
    Thread closer = loopback.closeInBackground();
    ServerFrame reconnect = s.await(ServerFrame::hasReconnect);
    assertThat(reconnect.getReconnect().getReason()).isEqualTo("server shutting down");
    s.halfClose();
    assertThat(s.awaitClosed().isOk()).isTrue();
    closer.join(TestTime.seconds(5).toMillis());
    assertThat(closer.isAlive()).isFalse();
  }

  @Test
  void askToMoveSendsThatSessionAReconnectWithTheSuggestedServerAndKeepsIt() {
    TestSession mover = raw();
    String connectionId = mover.helloFrame(Hello.newBuilder().setClientId("mover")).getWelcome().getConnectionId();
    TestSession other = session("other");

    assertThat(loopback.server().askToMove("no-such-connection", "10.0.0.9:9848", "rebalance")).isFalse();
    assertThat(loopback.server().askToMove(connectionId, "10.0.0.9:9848", "rebalance")).isTrue();

    ServerFrame reconnect = mover.await(ServerFrame::hasReconnect);
    assertThat(reconnect.getReconnect().getSuggestedServer()).isEqualTo("10.0.0.9:9848");
    assertThat(reconnect.getReconnect().getReason()).isEqualTo("rebalance");
    assertThat(mover.register("orders", "10.0.0.7", 8080).getOk()).as("the session stays until the client leaves")
        .isTrue();
    other.ping();
    assertThat(other.drainFrames()).noneMatch(ServerFrame::hasReconnect);
  }

  @Test
  void sessionsLeavingBecauseOfAShutdownPushNoRemovalsToSubscribers() throws Exception {
    TestSession provider = session("provider");
    provider.register("orders", "10.0.0.7", 8080);
    TestSession consumer = session("consumer");
    consumer.subscribe("orders");
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    Thread closer = loopback.closeInBackground();

    provider.await(ServerFrame::hasReconnect);
    provider.halfClose();
    assertThat(provider.awaitClosed().isOk()).isTrue();
    await().atMost(TestTime.seconds(5)).until(() -> loopback.server().sessions().count() == 1);
    consumer.await(ServerFrame::hasReconnect);
    consumer.halfClose();
    assertThat(consumer.awaitClosed().isOk()).isTrue();

    // The consumer keeps its last list through the restart: no push told it the provider left.
    assertThat(consumer.drainFrames()).noneMatch(ServerFrame::hasPush);
    closer.join(TestTime.seconds(5).toMillis());
  }

  private static int pendingOf(Session s) {
    return s.pendingPushes();
  }
}
