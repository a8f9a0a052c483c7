package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.TestSession;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A fresh server says it is warming up: in {@code welcome}, in query answers, and with one
 * {@code warm_up_done} frame to the sessions that heard it when the warm-up ends (decision 20).
 */
class WarmUpWelcomeTest {

  private RosterServer server;
  private final List<ManagedChannel> channels = new ArrayList<>();
  private final List<TestSession> sessions = new ArrayList<>();

  @AfterEach
  void stop() {
    sessions.forEach(TestSession::close);
    channels.forEach(ManagedChannel::shutdownNow);
    server.close();
  }

  private ManagedChannel channel() {
    ManagedChannel c = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    channels.add(c);
    return c;
  }

  private TestSession session() {
    TestSession s = new TestSession(channel());
    sessions.add(s);
    return s;
  }

  private static QueryInstancesRequest query() {
    return QueryInstancesRequest.newBuilder().setService(TestSession.key("demo")).build();
  }

  @Test
  void aWarmingServerSaysSoUntilItIsWarm() {
    server = RosterServer.start(ServerConfig.builder().host("127.0.0.1").port(0)
        .warmUp(Duration.ofMinutes(1)).build());
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

  @Test
  void warmUpZeroIsWarmFromTheStart() {
    server = RosterServer.start(ServerConfig.builder().host("127.0.0.1").port(0)
        .warmUp(Duration.ZERO).build());
    assertThat(session().helloFrame(Hello.newBuilder().setClientId("c")).getWelcome().getWarmUpRemainingMs())
        .isZero();
  }
}
