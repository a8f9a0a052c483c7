package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.MultiThreadIoEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.nio.NioIoHandler;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioSocketChannel;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.ListConnectionsResponse;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.RosterServer;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.StreamRecorder;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A standalone server against hostile or careless raw clients: each scenario is an abuse a raw
 * client can attempt against {@code make run}'s server, and each asserts what a production
 * registry must do instead (decisions 16-19). Real loopback sockets throughout.
 */
class HostileClientTest {

  /** Each test starts the server with the settings it is about. */
  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.shutdownGrace(Duration.ofSeconds(1))).startedByTest()
      .channelSettings(b -> b.maxInboundMessageSize(16 * 1024 * 1024));

  private ManagedChannel channel() {
    return loopback.newChannel();
  }

  private TestSession open(ManagedChannel channel) {
    return loopback.open(channel);
  }

  /**
   * 20 Connect streams on one TCP connection must not multiply the instance limit (20 × 5,000).
   * Sessions per connection are limited, and the instance limit holds for the whole
   * connection, however many streams share it.
   */
  @Test
  void limitsHoldPerConnectionNotPerStream() {
    RosterServer server = loopback.start(b -> b.maxSessionsPerConnection(3).maxInstancesPerConnection(4));
    ManagedChannel shared = channel();
    TestSession a = open(shared).hello("a");
    TestSession b = open(shared).hello("b");
    open(shared).hello("c");

    String id = "h";
    TestSession fourth = open(shared);
    fourth.send(ClientFrame.newBuilder().setRequestId(id).setHello(Hello.newBuilder().setClientId("d")).build());
    Result refused = fourth.await(f -> f.getRequestId().equals(id)).getResult();
    assertThat(refused.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(refused.getMessage()).contains("this connection already has 3 sessions")
        .contains("limit: 3").contains("--max-sessions-per-connection");

    for (int port = 1; port <= 2; port++) {
      assertThat(a.register("orders", "10.0.0.1", port).getOk()).isTrue();
      assertThat(b.register("orders", "10.0.0.2", port).getOk()).isTrue();
    }
    Result over = b.register("orders", "10.0.0.2", 3);
    assertThat(over.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(over.getMessage()).contains("this connection would own 5 instances")
        .contains("--max-instances-per-connection");
    assertThat(server.registry().snapshot(io.roster.server.model.ServiceKey.of("", "", "orders")).instances())
        .hasSize(4);

    // Another connection from the same address has its own connection budget.
    TestSession other = open(channel()).hello("e");
    assertThat(other.register("orders", "10.0.0.3", 1).getOk()).isTrue();
  }

  /** The sessions and instances of every connection from one address add up. */
  @Test
  void limitsHoldPerRemoteAddress() {
    RosterServer server = loopback.start(b -> b.maxSessionsPerAddress(2).maxInstancesPerAddress(3));
    TestSession a = open(channel()).hello("a");
    TestSession b = open(channel()).hello("b");

    String id = "h";
    TestSession third = open(channel());
    third.send(ClientFrame.newBuilder().setRequestId(id).setHello(Hello.newBuilder().setClientId("c")).build());
    Result refused = third.await(f -> f.getRequestId().equals(id)).getResult();
    assertThat(refused.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(refused.getMessage()).contains("the connections from 127.0.0.1 already have 2 sessions")
        .contains("--max-sessions-per-address");

    assertThat(a.register("orders", "10.0.0.1", 1).getOk()).isTrue();
    assertThat(a.register("orders", "10.0.0.1", 2).getOk()).isTrue();
    assertThat(b.register("orders", "10.0.0.2", 1).getOk()).isTrue();
    Result over = b.register("orders", "10.0.0.2", 2);
    assertThat(over.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(over.getMessage()).contains("the connections from 127.0.0.1 would own 4 instances")
        .contains("--max-instances-per-address");

    // A session that ends gives its slots back.
    a.halfClose();
    await().atMost(TestTime.seconds(5)).until(() -> server.sessions().count() == 1);
    assertThat(b.register("orders", "10.0.0.2", 2).getOk()).isTrue();
    TestSession again = open(channel()).hello("c");
    assertThat(again.register("orders", "10.0.0.3", 1).getOk()).isTrue();
  }

  /** Watch calls are limited per connection (10,000 on one connection would all be taken otherwise). */
  @Test
  void watchCallsArePerConnectionLimited() throws Exception {
    loopback.start(b -> b.maxWatchesPerConnection(2));
    ManagedChannel shared = channel();
    RegistryGrpc.RegistryStub stub = RegistryGrpc.newStub(shared);
    List<StreamRecorder<ServiceInfo>> watches = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      StreamRecorder<ServiceInfo> watch = new StreamRecorder<>();
      stub.watch(WatchRequest.newBuilder().setService(TestSession.key("orders")).build(), watch);
      watches.add(watch);
      if (i < 2) {
        assertThat(watch.next()).isNotNull();
      }
    }
    Status third = watches.get(2).awaitEnd();
    assertThat(third.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(third.getDescription()).contains("2 Watch calls").contains("--max-watches-per-connection");
    assertThat(watches.get(0).end()).isNotDone();
  }

  /**
   * A 5 MiB frame ends the stream with RESOURCE_EXHAUSTED naming the limit, not a bare
   * CANCELLED (and a server stack trace): the client learns the limit.
   */
  @Test
  void anOversizedFrameEndsTheStreamWithTheLimit() throws Exception {
    loopback.start();
    TestSession s = open(channel()).hello("big");
    s.send(ClientFrame.newBuilder().setRequestId("r").setRegister(RegisterInstance.newBuilder()
        .setService(TestSession.key("orders"))
        .setInstance(Instance.newBuilder().setIp("10.0.0.1").setPort(1)
            .putMetadata("blob", "x".repeat(5 * 1024 * 1024)))).build());
    Status status = s.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(status.getDescription()).contains("over the limit of 4194304 bytes").contains("--max-message-size");
  }

  /** A 3 MiB request id is not echoed into the status: it is cut short. */
  @Test
  void aHugeRequestIdIsNotEchoed() throws Exception {
    loopback.start();
    TestSession beforeHello = open(channel());
    String huge = "x".repeat(3 * 1024 * 1024);
    beforeHello.send(ClientFrame.newBuilder().setRequestId(huge).setPing(io.roster.proto.v1.Ping.getDefaultInstance()).build());
    Status status = beforeHello.awaitClosed();
    assertThat(status.getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
    assertThat(status.getDescription()).hasSizeLessThan(400).contains("(3145728 chars)");

    TestSession afterHello = open(channel()).hello("c");
    afterHello.send(ClientFrame.newBuilder().setRequestId(huge).setPing(io.roster.proto.v1.Ping.getDefaultInstance()).build());
    ServerFrame answer = afterHello.await(ServerFrame::hasResult);
    assertThat(answer.getRequestId()).isEmpty();
    assertThat(answer.getResult().getField()).isEqualTo("request_id");
    assertThat(answer.getResult().getMessage()).hasSizeLessThan(400);
    afterHello.ping();
  }

  /**
   * Once a stopping server has sent {@code reconnect} to every session, a new session is refused
   * with UNAVAILABLE (otherwise clients come back to it and are cut at the end of the grace),
   * and the server stops as soon as its sessions have left instead of taking the whole grace
   * (decision 17).
   */
  @Test
  void aStoppingServerRefusesNewSessionsAndStopsOnceTheLastOneLeft() throws Exception {
    RosterServer server = loopback.start(b -> b.shutdownGrace(Duration.ofSeconds(60)));
    TestSession staying = open(channel()).hello("staying");
    ManagedChannel early = channel();
    TestSession openedBefore = open(early);
    // The stream is open on the server, and has not said hello yet.
    await().atMost(TestTime.seconds(5)).until(() -> server.openStreams() == 2);

    CompletableFuture<Long> stoppedAfterMs = CompletableFuture.supplyAsync(() -> {
      long t0 = System.nanoTime();
      server.close();
      return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    });
    staying.await(ServerFrame::hasReconnect);

    openedBefore.send(ClientFrame.newBuilder().setRequestId("h").setHello(Hello.newBuilder().setClientId("late")).build());
    Status refused = openedBefore.awaitClosed();
    assertThat(refused.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(refused.getDescription()).contains("no new sessions here");

    assertThat(stoppedAfterMs).isNotDone();
    staying.halfClose();
    long took = stoppedAfterMs.get(TestTime.seconds(20).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(took).as("ms to stop with a 60 s grace").isLessThan(TestTime.seconds(10).toMillis());
  }

  /**
   * With 300 sessions carrying 15 KB of labels, one ListConnections answer would exceed 4 MiB
   * and fail for every caller. It is paged, and a page always fits.
   */
  @Test
  void listConnectionsIsPagedAndEveryPageFits() {
    loopback.start(b -> b.maxSessionsPerConnection(400));
    ManagedChannel shared = channel();
    Hello.Builder hello = Hello.newBuilder();
    for (int i = 0; i < 15; i++) {
      hello.putLabels("label-" + i, "v".repeat(1000));
    }
    for (int i = 0; i < 300; i++) {
      open(shared).helloFrame(hello.setClientId("c-" + i));
    }
    AdminGrpc.AdminBlockingStub admin = AdminGrpc.newBlockingStub(channel()).withMaxInboundMessageSize(4 * 1024 * 1024);
    ListConnectionsResponse first = admin.listConnections(ListConnectionsRequest.getDefaultInstance());
    assertThat(first.getTotal()).isEqualTo(300);
    assertThat(first.getConnectionsCount()).isEqualTo(100);
    assertThat(first.getConnections(0).getClientId()).isEqualTo("c-0");
    ListConnectionsResponse last = admin.listConnections(ListConnectionsRequest.newBuilder().setPageNo(3).build());
    assertThat(last.getConnections(99).getClientId()).isEqualTo("c-299");
    assertThat(admin.listConnections(ListConnectionsRequest.newBuilder().setPageNo(4).build()).getConnectionsCount())
        .isZero();
    assertThat(admin.listConnections(ListConnectionsRequest.newBuilder().setClientId("c-7").build()).getTotal())
        .isEqualTo(1);
    StatusRuntimeException tooBig = org.assertj.core.api.Assertions.catchThrowableOfType(StatusRuntimeException.class,
        () -> admin.listConnections(ListConnectionsRequest.newBuilder().setPageSize(101).build()));
    assertThat(tooBig.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(tooBig.getStatus().getDescription()).contains("page_size").contains("1..100");
  }

  /** A client id with a newline could forge a log line: control characters are refused. */
  @Test
  void controlCharactersInHelloAreRefused() {
    loopback.start();
    TestSession s = open(channel());
    s.send(ClientFrame.newBuilder().setRequestId("h").setHello(Hello.newBuilder()
        .setClientId("evil\n03:00:00.000 INFO  RosterServer - Stopped")).build());
    Result r = s.await(f -> f.getRequestId().equals("h")).getResult();
    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_ARGUMENT);
    assertThat(r.getField()).isEqualTo("hello.client_id");
    assertThat(r.getMessage()).contains("evil\\n03:00").doesNotContain("\n");
    s.hello("good");
  }

  /**
   * 20,000 refusals in a row must not stall the other connections on the same event loop (with
   * a rescan of the session's 5,000 instances per refusal, ~350–400 µs each, they stalled for
   * seconds and a new client timed out waiting for its welcome). A refusal is two counter
   * reads, and a flooding stream gives the event loop back every few dozen frames: other
   * connections' pings and hellos are answered throughout (decision 16).
   */
  @Test
  void aFloodOfRefusalsDoesNotStallOtherConnections() throws Exception {
    RosterServer server = loopback.start(b -> b.maxInstancesPerConnection(5000));
    // The flooding client gets an event loop of its own, so that what is measured is the
    // server's fairness, not the test JVM's client threads.
    // It is shut down after the whole class (@AfterAll), once the fixture has closed the
    // session and channel that use it: cancelling a stream on a terminated loop throws.
    flooderLoop = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    ManagedChannel flooderChannel = loopback.newChannel(b -> b.eventLoopGroup(flooderLoop)
        .channelType(NioSocketChannel.class));
    TestSession flooder = open(flooderChannel).hello("flooder");
    List<Instance> fill = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      fill.add(Instance.newBuilder().setIp("10.1." + (i / 250) + "." + (i % 250)).setPort(80).build());
    }
    assertThat(flooder.request(ClientFrame.newBuilder().setBatchRegister(
        io.roster.proto.v1.BatchRegisterInstances.newBuilder().setService(TestSession.key("big")).addAllInstances(fill)))
        .getOk()).isTrue();
    // Watchers on several connections: some share the flooder's event loop.
    List<TestSession> others = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      others.add(open(channel()).hello("other-" + i));
    }
    flooder.autoAck(false);
    int floods = 20_000;
    for (int i = 0; i < floods; i++) {
      flooder.send(ClientFrame.newBuilder().setRequestId("f" + i).setRegister(RegisterInstance.newBuilder()
          .setService(TestSession.key("big")).setInstance(Instance.newBuilder().setIp("10.9.9.9").setPort(i + 1))).build());
    }
    List<Long> rtts = new ArrayList<>();
    int rounds = 0;
    long deadline = System.nanoTime() + TestTime.seconds(60).toNanos();
    boolean floodDone = false;
    while (!floodDone && System.nanoTime() < deadline) {
      for (TestSession o : others) {
        long t0 = System.nanoTime();
        o.ping();
        rtts.add(System.nanoTime() - t0);
      }
      rounds++;
      floodDone = flooder.drainFrames().stream().anyMatch(f -> f.getRequestId().equals("f" + (floods - 1)));
    }
    TestSession late = open(channel()).hello("late");
    late.ping();
    assertThat(rounds).as("ping rounds while the flood was handled").isPositive();
    // Before the fix a ping waited for whole chunks of the flood, each refusal rescanning
    // 5,000 instances: seconds. Now the slowest is ~0.25 s on a loaded 2-core machine with
    // client and server in one JVM, most of it that load. The bound is loose on purpose.
    rtts.sort(null);
    assertThat(Duration.ofNanos(rtts.get(rtts.size() - 1)))
        .as("slowest ping round trip of %d on other connections during the flood (median %.2f ms)",
            rtts.size(), rtts.get(rtts.size() / 2) / 1e6)
        .isLessThan(TestTime.millis(1000));
    assertThat(server.registry().ownedCount(server.sessions().all().get(0).owner())).isEqualTo(5000);
  }

  /** The flooding client's own event loop, shut down after every test has cleaned up. */
  private static EventLoopGroup flooderLoop;

  @AfterAll
  static void stopFlooderLoop() {
    if (flooderLoop != null) {
      flooderLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    }
  }
}
