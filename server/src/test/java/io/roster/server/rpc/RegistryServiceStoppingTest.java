package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.testing.TestTime;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stopping server serves no state: sessions leaving during the shutdown are tearing it down.
 * Over loopback, against a real server that is stopping (one session still holds it open).
 */
class RegistryServiceStoppingTest {

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.shutdownGrace(TestTime.seconds(30)));

  private ManagedChannel channel;
  private TestSession holder;

  @BeforeEach
  void startThenStop() {
    channel = loopback.channel();
    holder = loopback.session("holder");
    assertThat(holder.register("orders", "10.0.0.1", 80).getOk()).isTrue();
    QueryInstancesRequest query = QueryInstancesRequest.newBuilder().setService(TestSession.key("orders")).build();
    assertThat(RegistryGrpc.newBlockingStub(channel).queryInstances(query).getServiceInfo().getInstancesCount())
        .as("served while running").isEqualTo(1);

    loopback.closeInBackground();
    holder.await(ServerFrame::hasReconnect); // the server is stopping from here on
  }

  /** The holder leaves cleanly; the fixture then closes the rest. */
  @AfterEach
  void leave() throws Exception {
    holder.halfClose();
    holder.awaitClosed();
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
