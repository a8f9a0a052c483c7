package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Drain;
import io.roster.proto.v1.DrainSummary;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.RosterServer;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The server's shutdown (docs/protocol.md "Ending a session", docs/operations.md "Server restarts"), over loopback. */
class ShutdownTest {

  /** Each test starts the server with the grace it is about. */
  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  private RosterServer server;

  private void start(Duration grace) {
    server = loopback.start(b -> b.shutdownGrace(grace));
  }

  private ManagedChannel channel() {
    return loopback.newChannel();
  }

  @Test
  void healthTurnsNotServingForTheServerAndEachServiceName() {
    start(TestTime.seconds(1));
    ManagedChannel channel = channel();
    Map<String, StreamRecorder<HealthCheckResponse>> seen = new ConcurrentHashMap<>();
    List<String> names = List.of("", "roster.v1.Session", "roster.v1.Registry", "roster.v1.Admin");
    for (String name : names) {
      StreamRecorder<HealthCheckResponse> q = new StreamRecorder<>();
      seen.put(name, q);
      HealthGrpc.newStub(channel).watch(HealthCheckRequest.newBuilder().setService(name).build(), q);
    }
    await().atMost(TestTime.seconds(10)).until(() -> names.stream().allMatch(n -> seen.get(n).values().size() == 1));
    assertThat(names).allSatisfy(n -> assertThat(seen.get(n).values().peek().getStatus())
        .isEqualTo(ServingStatus.SERVING));

    loopback.closeInBackground();

    await().atMost(TestTime.seconds(10)).untilAsserted(() -> assertThat(names).allSatisfy(n ->
        assertThat(seen.get(n).values()).as(n).extracting(HealthCheckResponse::getStatus)
            .containsExactly(ServingStatus.SERVING, ServingStatus.NOT_SERVING)));
  }

  @Test
  void newCallsAndConnectionsAreRefusedWhileSessionsStillHoldTheShutdown() {
    start(TestTime.seconds(30));
    ManagedChannel channel = channel();
    TestSession holder = loopback.open(channel).hello("holder");
    loopback.closeInBackground();
    holder.await(ServerFrame::hasReconnect);

    await().atMost(TestTime.seconds(10)).untilAsserted(() -> {
      TestSession late = loopback.open(channel);
      late.send(ClientFrame.newBuilder().setRequestId("1")
          .setHello(io.roster.proto.v1.Hello.newBuilder().setClientId("late")).build());
      assertThat(late.awaitClosed().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    });
    assertThatThrownBy(() -> RegistryGrpc.newBlockingStub(channel()).withDeadlineAfter(TestTime.seconds(10).toMillis(), TimeUnit.MILLISECONDS)
        .queryInstances(QueryInstancesRequest.newBuilder().setService(TestSession.key("orders")).build()))
        .as("a new connection").isInstanceOfSatisfying(StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    assertThat(holder.closed()).as("the old session is still open").isNotDone();
    assertThat(server.sessions().all()).extracting(s -> s.info().clientId()).containsExactly("holder");
    holder.halfClose();
  }

  @Test
  void sessionsThatStayAreCutAtTheEndOfTheGraceAndCleanedUp() throws Exception {
    Duration grace = TestTime.millis(600);
    start(grace);
    TestSession stays = loopback.open(channel()).hello("stays");
    assertThat(stays.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    long start = System.nanoTime();

    server.close();

    long tookNanos = System.nanoTime() - start;
    assertThat(tookNanos).as("waited out the grace").isGreaterThanOrEqualTo(grace.toNanos());
    assertThat(Duration.ofNanos(tookNanos)).as("and not much more").isLessThan(grace.plus(TestTime.seconds(5)));
    assertThat(stays.awaitClosed().isOk()).as("cut, not completed").isFalse();
    await().atMost(TestTime.seconds(10)).until(() -> server.sessions().count() == 0);
  }

  /** Watches end at once with UNAVAILABLE, while sessions still hold the shutdown open. */
  @Test
  void aWatchEndsAtOnceNotAtTheEndOfTheGrace() throws Exception {
    start(TestTime.seconds(30));
    ManagedChannel channel = channel();
    TestSession holder = loopback.open(channel).hello("holder");
    StreamRecorder<ServiceInfo> watch = new StreamRecorder<>();
    RegistryGrpc.newStub(channel).watch(WatchRequest.newBuilder().setService(TestSession.key("orders")).build(),
        watch);
    assertThat(watch.next()).isNotNull();

    loopback.closeInBackground();

    Status status = watch.awaitEnd();
    assertThat(status.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(status.getDescription())
        .isEqualTo("server shutting down; watch again, on another server if there is one");
    assertThat(holder.closed()).as("the grace is still running").isNotDone();
    holder.halfClose();
  }

  /** The stopping server pushes nothing, so a drain removes the instances and answers at once. */
  @Test
  void aDrainDuringShutdownRemovesTheInstancesAndAnswersWithZeroCounts() {
    start(TestTime.seconds(30));
    ManagedChannel channel = channel();
    TestSession provider = loopback.open(channel).hello("provider");
    assertThat(provider.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    TestSession consumer = loopback.open(channel).hello("consumer"); // acks every push
    consumer.subscribe("orders");
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 1);
    loopback.closeInBackground();
    provider.await(ServerFrame::hasReconnect);

    Result r = provider.request(ClientFrame.newBuilder().setDrain(Drain.newBuilder().setTimeoutMs(60_000)));

    assertThat(r.getOk()).isTrue();
    assertThat(r.getDrain()).isEqualTo(DrainSummary.getDefaultInstance());
    assertThat(server.registry().snapshot(ServiceKey.of("", "", "orders")).instances()).isEmpty();
    provider.halfClose();
    consumer.halfClose();
  }
}
