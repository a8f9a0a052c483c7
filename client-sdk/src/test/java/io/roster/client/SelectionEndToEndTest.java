package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceKey;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** Online/offline and selection through the public API, against an in-JVM server. */
class SelectionEndToEndTest extends SharedServerTest {

  private static List<String> ips(List<Instance> list) {
    return list.stream().map(Instance::ip).sorted().toList();
  }

  @Test
  void aProviderRegistersOfflineAndComesOnlineWithoutReconnecting() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    consumer.subscribe("warmup", events::add);
    Instance offline = Instance.builder().ip("10.5.0.1").port(8080).enabled(false).build();

    provider.registerInstance("warmup", offline);
    provider.registerInstance("warmup", Instance.of("10.5.0.2", 8080));
    await().atMost(TestServers.patience()).until(() -> ips(consumer.getAllInstances("warmup")).equals(List.of("10.5.0.2")));

    provider.registerInstance("warmup", offline.toBuilder().enabled(true).weight(2).build()); // ready now
    await().atMost(TestServers.patience())
        .until(() -> ips(consumer.getAllInstances("warmup")).equals(List.of("10.5.0.1", "10.5.0.2")));
    assertThat(events).noneMatch(e -> e.instances().stream().anyMatch(i -> !i.enabled()));
  }

  @Test
  void selectionHonoursClustersWeightsAndSaysWhyWhenNothingIsLeft() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    provider.registerInstance("zoned", Instance.builder().ip("10.6.0.1").port(80).cluster("z1").build());
    provider.registerInstance("zoned", Instance.builder().ip("10.6.0.2").port(80).cluster("z2").build());
    provider.registerInstance("zoned", Instance.builder().ip("10.6.0.3").port(80).cluster("z2").weight(0).build());
    consumer.subscribe("zoned", e -> { });
    await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("zoned").size() == 3);

    assertThat(ips(consumer.selectInstances("zoned", null, List.of("z2"), true))).containsExactly("10.6.0.2");
    assertThat(consumer.selectOneHealthyInstance("zoned", null, List.of("z1")).ip()).isEqualTo("10.6.0.1");
    assertThat(ips(consumer.selectInstances("zoned", true))).containsExactly("10.6.0.1", "10.6.0.2");
    assertThatThrownBy(() -> consumer.selectOneHealthyInstance("zoned", null, List.of("z3")))
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(RosterException.Code.NO_INSTANCE_AVAILABLE);
          assertThat(e.getMessage()).contains("clusters [z3]").contains("zoned");
        });
  }

  @Test
  void whenTheProtectThresholdIsReachedSelectionSpreadsOverUnhealthyInstancesToo() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    provider.registerInstance("guarded", Instance.of("10.8.0.1", 80));
    provider.registerInstance("guarded", Instance.of("10.8.0.2", 80));
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    consumer.subscribe("guarded", events::add);
    await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("guarded").size() == 2);
    ManagedChannel admin = NettyChannelBuilder.forAddress("127.0.0.1", server.port()).usePlaintext().build();
    try {
      RegistryGrpc.RegistryBlockingStub registry = RegistryGrpc.newBlockingStub(admin);
      registry.updateInstance(UpdateInstanceRequest.newBuilder()
          .setService(ServiceKey.newBuilder().setName("guarded")).setIp("10.8.0.2").setPort(80).setHealthy(false).build());
      await().atMost(TestServers.patience()).until(() -> consumer.selectInstances("guarded", false).size() == 1);

      // Threshold off: a dead instance is never chosen.
      Set<String> chosen = new HashSet<>();
      for (int i = 0; i < 200; i++) {
        chosen.add(consumer.selectOneHealthyInstance("guarded").ip());
      }
      assertThat(chosen).containsExactly("10.8.0.1");

      registry.updateService(UpdateServiceRequest.newBuilder()
          .setService(ServiceKey.newBuilder().setName("guarded")).setProtectThreshold(0.5).build());
      await().atMost(TestServers.patience()).until(() -> !events.isEmpty() && events.get(events.size() - 1).protectThresholdReached());

      assertThat(ips(consumer.selectInstances("guarded", true))).containsExactly("10.8.0.1", "10.8.0.2");
      chosen.clear();
      for (int i = 0; i < 200; i++) {
        chosen.add(consumer.selectOneHealthyInstance("guarded").ip());
      }
      assertThat(chosen).containsExactlyInAnyOrder("10.8.0.1", "10.8.0.2");
    } finally {
      admin.shutdownNow();
    }
  }

  @Test
  void aNoOpChangeReachesNoListener() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    provider.registerInstance("noop", Instance.of("10.9.0.1", 80));
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    consumer.subscribe("noop", events::add);
    await().atMost(TestServers.patience()).until(() -> events.size() == 1);

    provider.registerInstance("noop", Instance.of("10.9.0.1", 80)); // the same content again
    provider.registerInstance("other-noop", Instance.of("10.9.0.2", 80)); // another service
    provider.registerInstance("noop", Instance.of("10.9.0.3", 80)); // a real change, as a marker

    await().atMost(TestServers.patience()).until(() -> events.size() >= 2);
    assertThat(events).hasSize(2);
    assertThat(events.get(1).added()).extracting(Instance::ip).containsExactly("10.9.0.3");
  }

  @Test
  void clientsCanShareOneSchedulerAndClosingOneLeavesItToTheOthers() {
    java.util.concurrent.ScheduledThreadPoolExecutor shared = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
    shared.setRemoveOnCancelPolicy(true);
    try {
      RosterClient provider = TestServers.client(server).scheduler(shared).build();
      RosterClient consumer = TestServers.client(server).scheduler(shared).build();
      clients.add(consumer);
      provider.registerInstance("shared-sched", Instance.of("10.9.1.1", 80));
      consumer.subscribe("shared-sched", e -> { });
      await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("shared-sched").size() == 1);

      provider.close();

      assertThat(shared.isShutdown()).isFalse();
      await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("shared-sched").isEmpty());
      RosterClient another = TestServers.client(server).scheduler(shared).build();
      clients.add(another);
      another.registerInstance("shared-sched", Instance.of("10.9.1.2", 80));
      await().atMost(TestServers.patience()).until(() -> consumer.getAllInstances("shared-sched").size() == 1);
    } finally {
      closeClients();
      clients.clear();
      shared.shutdownNow();
    }
  }

  /**
   * A listener on a direct executor makes a blocking call to the client (a query of another
   * service) for the first state and again for a change: both calls answer, nothing stalls.
   * (The change is made only once the first state was heard: made earlier, it may be merged
   * into the first push, and the listener then hears a single event; under load it did.)
   */
  @Test
  void aListenerOnADirectExecutorMayCallTheClientBackWithoutStallingIt() {
    RosterClient provider = newClient();
    List<Integer> seenFromListener = new CopyOnWriteArrayList<>();
    RosterClient consumer = TestServers.client(server).listenerExecutor(Runnable::run).build();
    clients.add(consumer);
    provider.registerInstance("direct-a", Instance.of("10.9.2.1", 80));
    provider.registerInstance("direct-b", Instance.of("10.9.2.2", 80));
    // A blocking call from inside the listener: it must not run on the transport thread.
    consumer.subscribe("direct-a", e -> seenFromListener.add(consumer.getAllInstances("direct-b").size()));
    // The first state first: a change made while the subscriber's first push is still queued is
    // merged into it (latest wins), and the listener would then be called only once.
    await().atMost(TestServers.patience()).until(() -> seenFromListener.size() == 1);

    provider.registerInstance("direct-a", Instance.of("10.9.2.3", 80));

    await().atMost(TestServers.patience()).until(() -> seenFromListener.size() >= 2);
    assertThat(seenFromListener).containsOnly(1);
  }
}
