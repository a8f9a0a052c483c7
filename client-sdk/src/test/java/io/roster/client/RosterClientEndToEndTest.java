package io.roster.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.roster.client.RosterException.Code;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The SDK against a real in-JVM server over a loopback socket, through the public API only. */
class RosterClientEndToEndTest extends SharedServerTest {

  /** The last event's instance list, as ip:port strings. */
  private static List<String> lastList(List<InstancesChangeEvent> events) {
    if (events.isEmpty()) {
      return null;
    }
    List<String> result = new ArrayList<>();
    events.get(events.size() - 1).instances().forEach(i -> result.add(i.ip() + ":" + i.port()));
    return result;
  }

  @Test
  void aSubscriberSeesARegistrationAndItsDeregistration() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    consumer.subscribe("e2e.basic", events::add);
    await().atMost(TestServers.patience()).until(() -> lastList(events) != null);
    assertThat(lastList(events)).as("first state of an empty service").isEmpty();

    provider.registerInstance("e2e.basic", "10.0.0.7", 8080);
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastList(events)).containsExactly("10.0.0.7:8080"));
    InstancesChangeEvent added = events.get(events.size() - 1);
    assertThat(added.added()).extracting(Instance::ip).containsExactly("10.0.0.7");
    assertThat(added.serviceName()).isEqualTo("e2e.basic");
    assertThat(added.group()).isEqualTo("DEFAULT_GROUP");
    assertThat(added.namespace()).isEqualTo("public");
    Instance seen = added.instances().get(0);
    assertThat(seen.healthy()).isTrue();
    assertThat(seen.enabled()).isTrue();
    assertThat(seen.weight()).isEqualTo(1.0);
    assertThat(seen.instanceId()).contains("10.0.0.7").contains("8080");

    provider.deregisterInstance("e2e.basic", "10.0.0.7", 8080);
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastList(events)).isEmpty());
    assertThat(events.get(events.size() - 1).removed()).extracting(Instance::port)
        .containsExactly(8080);
  }

  @Test
  void modificationsArriveAsModifiedAndWeightZeroStaysZero() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    provider.registerInstance("e2e.modify", Instance.of("10.0.0.8", 80));
    consumer.subscribe("e2e.modify", events::add);
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastList(events)).containsExactly("10.0.0.8:80"));

    provider.registerInstance("e2e.modify",
        Instance.of("10.0.0.8", 80).withWeight(0).withMetadata(Map.of("v", "2")));
    await().atMost(TestServers.patience()).untilAsserted(() -> {
      InstancesChangeEvent last = events.get(events.size() - 1);
      assertThat(last.modified()).hasSize(1);
      assertThat(last.modified().get(0).weight()).isZero();
      assertThat(last.modified().get(0).metadata()).containsEntry("v", "2");
      assertThat(last.added()).isEmpty();
    });
    assertThatThrownBy(() -> consumer.selectOneHealthyInstance("e2e.modify"))
        .isInstanceOfSatisfying(RosterException.class,
            e -> assertThat(e.code()).isEqualTo(Code.NO_INSTANCE_AVAILABLE));
  }

  @Test
  void serverRejectionsNameTheFieldAndTheClientKeepsWorking() {
    RosterClient provider = newClient();

    assertThatThrownBy(() -> provider.registerInstance("bad name!", "10.0.0.7", 80))
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
          assertThat(e.field()).contains("service");
        })
        .hasMessageStartingWith("service.name: ")
        .hasMessageContaining("bad name!")
        .hasMessageContaining("expected");

    Instance tooMuch = Instance.of("10.0.0.7", 80).withMetadata(Map.of("blob", "x".repeat(2000)));
    assertThatThrownBy(() -> provider.registerInstance("e2e.rejects", tooMuch))
        .isInstanceOfSatisfying(RosterException.class, e -> {
          assertThat(e.code()).isEqualTo(Code.INVALID_ARGUMENT);
          assertThat(e.field()).contains("metadata");
        })
        .hasMessageContaining("metadata")
        .hasMessageContaining("1024");

    provider.registerInstance("e2e.rejects", "10.0.0.9", 81);
    RosterClient other = newClient();
    assertThat(other.getAllInstances("e2e.rejects")).extracting(Instance::ip)
        .containsExactly("10.0.0.9");
  }

  @Test
  void closingAProviderRemovesItsInstancesForSubscribers() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    List<InstancesChangeEvent> events = new CopyOnWriteArrayList<>();
    provider.batchRegisterInstance("e2e.close",
        List.of(Instance.of("10.0.1.1", 80), Instance.of("10.0.1.2", 80)));
    consumer.subscribe("e2e.close", events::add);
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastList(events)).hasSize(2));

    provider.close();
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastList(events)).isEmpty());
    assertThat(consumer.getAllInstances("e2e.close")).isEmpty();
    assertThatThrownBy(() -> provider.registerInstance("e2e.close", "10.0.1.1", 80))
        .isInstanceOf(ClientClosedException.class);
  }

  @Test
  void queriesAndSelection() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    provider.batchRegisterInstance("e2e.select", List.of(
        Instance.of("10.0.2.1", 80).withWeight(1),
        Instance.of("10.0.2.2", 80).withWeight(0)));

    assertThat(consumer.getAllInstances("e2e.select")).hasSize(2);
    assertThat(consumer.selectInstances("e2e.select", true)).extracting(Instance::ip)
        .containsExactly("10.0.2.1");
    for (int i = 0; i < 20; i++) {
      assertThat(consumer.selectOneHealthyInstance("e2e.select").ip()).isEqualTo("10.0.2.1");
    }
    assertThat(consumer.getAllInstances("e2e.nothing-here")).isEmpty();
  }

  /**
   * Two listeners of one service share one server-side subscription. A late listener hears the
   * cached state at once. Unsubscribing needs the same listener object (a new method reference
   * is another listener and changes nothing); removing one of two keeps the subscription;
   * removing the last sends {@code unsubscribe}: the server's subscriber count of the service
   * drops to zero, while the consumer can still query it.
   */
  @Test
  void aLateListenerAndUnsubscribeOfTheLastOneEndsTheServerSubscription() {
    RosterClient provider = newClient();
    RosterClient consumer = newClient();
    provider.batchRegisterInstance("e2e.unsub", List.of(
        Instance.of("10.0.2.1", 80), Instance.of("10.0.2.2", 80)));
    List<InstancesChangeEvent> first = new CopyOnWriteArrayList<>();
    List<InstancesChangeEvent> late = new CopyOnWriteArrayList<>();
    Listener firstListener = first::add;
    Listener lateListener = late::add;

    consumer.subscribe("e2e.unsub", firstListener);
    await().atMost(TestServers.patience()).until(() -> !first.isEmpty());
    consumer.subscribe("e2e.unsub", lateListener);
    await().atMost(TestServers.patience()).until(() -> !late.isEmpty());
    assertThat(late.get(0).added()).hasSize(2);
    assertThat(first).hasSize(1);
    assertThat(TestServers.serviceOnServer(server, "e2e.unsub").getSubscriberCount())
        .as("one subscription for both listeners").isEqualTo(1);

    consumer.unsubscribe("e2e.unsub", late::add); // a new method reference: another listener, no effect
    consumer.unsubscribe("e2e.unsub", lateListener);
    provider.registerInstance("e2e.unsub", "10.0.2.3", 80);
    provider.registerInstance("e2e.unsub", "10.0.2.4", 80);
    // Events of a service are delivered in order: once the first listener has the fourth
    // instance, any listener still registered has been told of the third.
    await().atMost(TestServers.patience())
        .untilAsserted(() -> assertThat(lastList(first)).hasSize(4));
    assertThat(late).as("the removed listener hears nothing more").hasSize(1);
    assertThat(TestServers.serviceOnServer(server, "e2e.unsub").getSubscriberCount())
        .as("the other listener keeps the subscription").isEqualTo(1);

    consumer.unsubscribe("e2e.unsub", firstListener);
    await().atMost(TestServers.patience()).untilAsserted(() ->
        assertThat(TestServers.serviceOnServer(server, "e2e.unsub").getSubscriberCount())
            .as("subscribers of e2e.unsub on the server").isZero());
    assertThat(consumer.getAllInstances("e2e.unsub")).hasSize(4);
  }

  @Test
  void servicesArePaged() {
    RosterClient provider = newClient();
    for (int i = 1; i <= 5; i++) {
      provider.registerInstance("svc-" + i, "paging", Instance.of("10.0.3." + i, 80));
    }
    ServicePage first = provider.getServicesOfServer(1, 2, "paging");
    ServicePage second = provider.getServicesOfServer(2, 2, "paging");
    ServicePage third = provider.getServicesOfServer(3, 2, "paging");
    ServicePage beyond = provider.getServicesOfServer(4, 2, "paging");
    assertThat(first.total()).isEqualTo(5);
    assertThat(first.names()).containsExactly("svc-1", "svc-2");
    assertThat(second.names()).containsExactly("svc-3", "svc-4");
    assertThat(third.names()).containsExactly("svc-5");
    assertThat(beyond.names()).isEmpty();
    assertThat(provider.getServicesOfServer(1, 100).names())
        .as("default group only").doesNotContain("svc-1");
  }
}
