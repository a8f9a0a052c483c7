package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.server.model.Instance;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.Registry;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import io.roster.server.session.SessionLimits;
import org.junit.jupiter.api.Test;

/** A stopping server serves no state: sessions leaving during the shutdown are tearing it down. */
class RegistryServiceStoppingTest {

  @Test
  void onceStoppingEveryReadIsUnavailableInsteadOfAHalfEmptiedState() {
    FakeScheduler scheduler = new FakeScheduler();
    Registry registry = new Registry(scheduler::currentTimeMillis);
    PushEngine engine = new PushEngine(registry, scheduler, Duration.ofMillis(20));
    registry.setChangeListener(engine);
    registry.register("c1", ServiceKey.of("", "", "orders"),
        new Instance("10.0.0.1", 80, 1, true, true, true, "", Map.of(), ""));
    RegistryService service = new RegistryService(registry, engine, scheduler, SessionLimits.of(5000, 5000));
    QueryInstancesRequest query = QueryInstancesRequest.newBuilder()
        .setService(io.roster.proto.v1.ServiceKey.newBuilder().setName("orders")).build();

    Recorder before = new Recorder();
    service.queryInstances(query, before);
    assertThat(before.values).hasSize(1);

    service.stop("server shutting down");
    Recorder after = new Recorder();
    service.queryInstances(query, after);

    assertThat(after.values).isEmpty();
    assertThat(after.error.getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(after.error.getDescription()).isEqualTo("server shutting down; ask another server");
    // The session's query frame goes through the same answer.
    assertThatThrownBy(() -> service.answer(query, "public"))
        .isInstanceOfSatisfying(RegistryException.class,
            e -> assertThat(e.kind()).isEqualTo(RegistryException.Kind.UNAVAILABLE))
        .hasMessage("server shutting down; ask another server");
  }

  private static final class Recorder implements StreamObserver<QueryInstancesResponse> {
    final List<QueryInstancesResponse> values = new ArrayList<>();
    Status error;

    @Override
    public void onNext(QueryInstancesResponse value) {
      values.add(value);
    }

    @Override
    public void onError(Throwable t) {
      error = Status.fromThrowable(t);
    }

    @Override
    public void onCompleted() {}
  }
}
