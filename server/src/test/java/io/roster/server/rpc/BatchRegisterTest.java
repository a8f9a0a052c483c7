package io.roster.server.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Instance;
import io.roster.proto.v1.Result;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.Registry;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionLimits;
import io.roster.server.session.SessionManager;
import io.roster.server.testing.LoopbackServer;
import io.roster.server.testing.TestSession;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code batchRegister} as docs/protocol.md ("register, deregister, batchRegister") describes it. */
class BatchRegisterTest {

  private static final ServiceKey ORDERS = ServiceKey.of("", "", "orders");

  @RegisterExtension
  final LoopbackServer loopback = LoopbackServer.with(b -> b.maxInstancesPerConnection(3));

  private TestSession provider;

  @BeforeEach
  void hello() {
    provider = loopback.session("provider");
  }

  private static Instance.Builder instance(String ip, int port) {
    return Instance.newBuilder().setIp(ip).setPort(port);
  }

  private Result batch(Instance.Builder... instances) {
    BatchRegisterInstances.Builder b = BatchRegisterInstances.newBuilder().setService(TestSession.key("orders"));
    for (Instance.Builder i : instances) {
      b.addInstances(i);
    }
    return provider.request(ClientFrame.newBuilder().setBatchRegister(b));
  }

  private List<String> stored() {
    return loopback.server().registry().snapshot(ORDERS).instances().stream().map(i -> i.ip() + ":" + i.port()).toList();
  }

  @Test
  void aListNamingAnInstanceTwiceIsRefusedAndChangesNothing() {
    assertThat(batch(instance("10.0.0.9", 1)).getOk()).isTrue();

    Result r = batch(instance("10.0.0.1", 1), instance("10.0.0.1", 1).setWeight(2));

    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_ARGUMENT);
    assertThat(r.getField()).isEqualTo("instances[1]");
    assertThat(r.getMessage()).isEqualTo(
        "instances[1]: \"10.0.0.1:1/DEFAULT\" (expected: an (ip, port, cluster) not already given at instances[0])");
    assertThat(stored()).containsExactly("10.0.0.9:1");
    // The same ip and port in another cluster is another instance.
    assertThat(batch(instance("10.0.0.1", 1), instance("10.0.0.1", 1).setCluster("eu")).getOk()).isTrue();
  }

  @Test
  void aListOverTheInstanceLimitIsResourceExhaustedAndChangesNothing() {
    assertThat(batch(instance("10.0.0.1", 1)).getOk()).isTrue();

    Result r = batch(instance("10.0.0.1", 1), instance("10.0.0.1", 2), instance("10.0.0.1", 3),
        instance("10.0.0.1", 4));

    assertThat(r.getCode()).isEqualTo(ErrorCode.ERROR_CODE_RESOURCE_EXHAUSTED);
    assertThat(r.getMessage()).contains("limit: 3").contains("--max-instances-per-connection");
    assertThat(stored()).containsExactly("10.0.0.1:1");
    assertThat(batch(instance("10.0.0.1", 1), instance("10.0.0.1", 2), instance("10.0.0.1", 3)).getOk())
        .as("exactly at the limit").isTrue();
  }

  @Test
  void anEmptyListRemovesThemAll() {
    TestSession consumer = loopback.session("consumer");
    consumer.subscribe("orders");
    assertThat(batch(instance("10.0.0.1", 1), instance("10.0.0.2", 1)).getOk()).isTrue();
    consumer.awaitPush("orders", i -> i.getInstancesCount() == 2);

    assertThat(batch().getOk()).isTrue();

    consumer.awaitPush("orders", i -> i.getInstancesCount() == 0);
    assertThat(stored()).isEmpty();
    assertThat(loopback.server().sessions().all()).filteredOn(s -> s.info().clientId().equals("provider"))
        .singleElement().satisfies(s -> assertThat(s.instanceCount()).isZero());
  }

  @Test
  void errorsNameTheIndexOfTheFaultyInstance() {
    Result badCluster = batch(instance("10.0.0.1", 1).setCluster("no spaces"), instance("10.0.0.2", 1));
    assertThat(badCluster.getField()).isEqualTo("instances[0].cluster");
    assertThat(badCluster.getMessage()).startsWith("instances[0].cluster: \"no spaces\"");

    Result badPort = batch(instance("10.0.0.1", 1), instance("10.0.0.2", 1), instance("10.0.0.3", 0));
    assertThat(badPort.getField()).isEqualTo("instances[2].port");
    assertThat(badPort.getMessage()).startsWith("instances[2].port: 0");

    Result badWeight = batch(instance("10.0.0.1", 1).setWeight(20_000));
    assertThat(badWeight.getField()).isEqualTo("instances[0].weight");
    assertThat(badWeight.getMessage()).isEqualTo("instances[0].weight: 20000.0 (expected: 0..10000)");
    assertThat(stored()).isEmpty();
  }

  /**
   * Adds, replaces and removes in one change: one revision (the registry's clock stands still
   * here, so every change is exactly +1) and one push, whatever the coalescing window.
   */
  @Test
  void subscribersSeeOneRevisionAndOnePush() {
    FakeScheduler scheduler = new FakeScheduler();
    Registry registry = new Registry(() -> 0L);
    PushEngine engine = new PushEngine(registry, scheduler, Duration.ZERO);
    List<ServiceKey> changes = new ArrayList<>();
    registry.addListener(c -> {
      changes.add(c.service());
      engine.onChange(c);
    });
    SessionManager manager = new SessionManager(registry, engine, scheduler, Duration.ofSeconds(3),
        SessionLimits.of(10, 10));
    Recorder providerOut = new Recorder();
    Recorder consumerOut = new Recorder();
    Session owner = manager.open(info("p"), providerOut);
    Session consumer = manager.open(info("c"), consumerOut);
    owner.register(ORDERS, model("10.0.0.1", 1));
    owner.register(ORDERS, model("10.0.0.2", 1));
    consumer.subscribe(ORDERS, Set.of(), () -> { });
    scheduler.runDue();
    long before = registry.snapshot(ORDERS).revision();
    changes.clear();
    consumerOut.sent.clear();

    // Removes .1, changes .2, adds .3 and .4.
    owner.batchRegister(ORDERS, List.of(model("10.0.0.2", 1).withWeight(5), model("10.0.0.3", 1),
        model("10.0.0.4", 1)));
    scheduler.advance(Duration.ofSeconds(1));

    assertThat(changes).hasSize(1);
    assertThat(registry.snapshot(ORDERS).revision()).isEqualTo(before + 1);
    assertThat(consumerOut.sent).singleElement().satisfies(p -> {
      assertThat(p.revision()).isEqualTo(before + 1);
      assertThat(p.snapshot().instances()).extracting(io.roster.server.model.Instance::ip)
          .containsExactly("10.0.0.2", "10.0.0.3", "10.0.0.4");
    });
  }

  private static SessionInfo info(String id) {
    return new SessionInfo(id, id, "public", "", "", Map.of(), "test", 0);
  }

  private static io.roster.server.model.Instance model(String ip, int port) {
    return new io.roster.server.model.Instance(ip, port, 1, true, true, true, "", Map.of(), "");
  }

  private static final class Recorder implements Outbound {
    final List<PushPayload> sent = new ArrayList<>();

    @Override
    public boolean isReady() {
      return true;
    }

    @Override
    public int send(PushPayload payload) {
      sent.add(payload);
      return 0;
    }
  }
}
