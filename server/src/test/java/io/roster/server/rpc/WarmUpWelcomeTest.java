package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.RosterServer;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fresh server says it is warming up: in {@code welcome}, in query answers, and with one
 * {@code warm_up_done} frame to the sessions that heard it when the warm-up ends (decision 20).
 */
class WarmUpWelcomeTest {

  /** Each test starts the server with the warm-up it is about. */
  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.withDefaults().startedByTest();

  private ManagedChannel channel() {
    return loopback.newChannel();
  }

  private TestSession session() {
    return loopback.open(channel());
  }

  private static QueryInstancesRequest query() {
    return QueryInstancesRequest.newBuilder().setService(TestSession.key("demo")).build();
  }

  @Test
  void aWarmingServerSaysSoUntilItIsWarm() {
    RosterServer server = loopback.start(b -> b.warmUp(Duration.ofMinutes(1)).warmUpQuiet(Duration.ZERO));
    TestSession early = session();
    ServerFrame welcome = early.helloFrame(Hello.newBuilder().setClientId("early"));
    assertThat(welcome.getWelcome().getWarmUpRemainingMs()).isBetween(1L, 60_000L);
    assertThat(RegistryGrpc.newBlockingStub(channel()).queryInstances(query()).getWarmUpRemainingMs())
        .isBetween(1L, 60_000L);
    assertThat(early.request(ClientFrame.newBuilder().setQuery(query())).getQuery().getWarmUpRemainingMs())
        .isBetween(1L, 60_000L);

    server.warmUp().warmUpDone(); // what a cluster layer does once caught up
    assertThat(early.await(ServerFrame::hasWarmUpDone).getRequestId()).isEmpty();

    TestSession late = session();
    assertThat(late.helloFrame(Hello.newBuilder().setClientId("late")).getWelcome().getWarmUpRemainingMs())
        .isZero();
    assertThat(RegistryGrpc.newBlockingStub(channel()).queryInstances(query()).getWarmUpRemainingMs())
        .isZero();
    late.ping();
    assertThat(late.drainFrames()).noneMatch(ServerFrame::hasWarmUpDone);
  }

  /**
   * The reconnect storm is over (here: one client came back): the warm-up ends a quiet period
   * after it, long before its window, and the session that heard it was warming is told
   * (decision 88).
   */
  @Test
  void aWarmUpEndsOnceSessionsStopArrivingWellWithinItsWindow() {
    RosterServer server = loopback.start(b -> b.warmUp(Duration.ofMinutes(1)).warmUpQuiet(Duration.ofSeconds(1)));
    TestSession back = session();
    assertThat(back.helloFrame(Hello.newBuilder().setClientId("back")).getWelcome().getWarmUpRemainingMs())
        .as("warming until a quiet period after this session").isPositive();
    assertThat(back.await(ServerFrame::hasWarmUpDone).getRequestId()).isEmpty();
    assertThat(server.warmUp().isWarm()).isTrue();
    assertThat(session().helloFrame(Hello.newBuilder().setClientId("late")).getWelcome().getWarmUpRemainingMs())
        .isZero();
  }

  @Test
  void warmUpZeroIsWarmFromTheStart() {
    loopback.start(b -> b.warmUp(Duration.ZERO));
    assertThat(session().helloFrame(Hello.newBuilder().setClientId("c")).getWelcome().getWarmUpRemainingMs())
        .isZero();
  }
}
