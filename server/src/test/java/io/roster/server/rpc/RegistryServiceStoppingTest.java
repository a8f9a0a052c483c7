package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.RosterServer;
import io.roster.server.config.ServerConfig;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A stopping server serves no state: sessions leaving during the shutdown are tearing it down.
 * Over loopback, against a real server that is stopping (one session still holds it open).
 */
class RegistryServiceStoppingTest {

  private RosterServer server;
  private ManagedChannel channel;
  private TestSession holder;
  private Thread closer;

  @BeforeEach
  void startThenStop() {
    server = RosterServer.start(ServerConfig.builder().host("127.0.0.1").port(0)
        .shutdownGrace(TestTime.seconds(30)).build());
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    holder = new TestSession(channel).hello("holder");
    assertThat(holder.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    QueryInstancesRequest query = QueryInstancesRequest.newBuilder().setService(TestSession.key("orders")).build();
    assertThat(RegistryGrpc.newBlockingStub(channel).queryInstances(query).getServiceInfo().getInstancesCount())
        .as("served while running").isEqualTo(1);

    closer = new Thread(server::close, "closer");
    closer.start();
    holder.await(ServerFrame::hasReconnect); // the server is stopping from here on
  }

  @AfterEach
  void stop() throws Exception {
    holder.halfClose();
    holder.awaitClosed();
    channel.shutdownNow();
    closer.join(TestTime.seconds(10).toMillis());
    server.close();
  }

  @Test
  void theQueryFrameIsAnsweredUnavailable() {
    Result r = holder.request(ClientFrame.newBuilder().setQuery(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("orders"))));

    assertThat(r.getOk()).isFalse();
    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_UNAVAILABLE);
    assertThat(r.getMessage()).isEqualTo("server shutting down; ask another server");
  }

  @Test
  void everyRegistryReadIsUnavailableInsteadOfAHalfEmptiedState() {
    var registry = RegistryGrpc.newBlockingStub(channel).withDeadlineAfter(TestTime.seconds(10).toMillis(),
        TimeUnit.MILLISECONDS);

    assertUnavailable(() -> registry.queryInstances(QueryInstancesRequest.newBuilder()
        .setService(TestSession.key("orders")).build()));
    assertUnavailable(() -> registry.listServices(ListServicesRequest.getDefaultInstance()));
    assertUnavailable(() -> registry.getService(GetServiceRequest.newBuilder()
        .setService(TestSession.key("orders")).build()));
  }

  private static void assertUnavailable(Runnable call) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class,
        e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
  }
}
