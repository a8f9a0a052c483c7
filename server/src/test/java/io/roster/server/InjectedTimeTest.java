package io.roster.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Welcome;
import io.roster.server.config.ServerConfig;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import io.roster.server.time.FakeScheduler;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A server started on a scheduler and a wall clock given from outside ({@code
 * RosterServer.start(config, scheduler, wallClockMicros)}): its revisions come from that clock,
 * and its sessions own as (the node id told in welcome, SESSION, the connection id).
 */
class InjectedTimeTest {

  @Test
  void revisionsComeFromTheGivenClockAndSessionsOwnAsThisNode() throws Exception {
    FakeScheduler scheduler = new FakeScheduler();
    ServerConfig config = ServerConfig.builder().dataDir(null).host("127.0.0.1").port(0).shutdownGrace(TestTime.seconds(1)).build();
    try (RosterServer server = RosterServer.start(config, scheduler, () -> scheduler.currentTimeMillis() * 1000)) {
      long boot = scheduler.currentTimeMillis() * 1000;
      assertThat(server.registry().bootRevision()).isEqualTo(boot);

      ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
      try (TestSession session = new TestSession(channel)) {
        Welcome welcome = session.helloFrame(Hello.newBuilder().setClientId("c1")).getWelcome();
        assertThat(session.register("orders", "10.0.0.1", 80).getOk()).isTrue();

        // The fake clock stands still: the registration takes the next revision after the boot.
        assertThat(server.registry().snapshot(ServiceKey.of("", "", "orders")).revision()).isEqualTo(boot + 1);
        assertThat(server.sessions().all()).singleElement().satisfies(s ->
            assertThat(s.owner()).isEqualTo(Owner.session(welcome.getNodeId(), welcome.getConnectionId())));
        assertThat(welcome.getNodeId()).isEqualTo("127.0.0.1:" + server.port() + "@" + Long.toString(boot, 36));
      } finally {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      }
    }
  }
}
