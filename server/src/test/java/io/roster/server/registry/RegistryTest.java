package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RegistryTest {

  private final AtomicLong micros = new AtomicLong(1_000_000);
  private final List<ServiceKey> changes = new ArrayList<>();
  private Registry registry;
  private final ServiceKey orders = ServiceKey.of("", "", "orders");
  private final ServiceKey users = ServiceKey.of("", "", "users");

  @BeforeEach
  void setUp() {
    registry = new Registry(micros::get);
    registry.addListener(c -> changes.add(c.service()));
  }

  private static Instance inst(String ip, int port) {
    return new Instance(ip, port, 1, true, true, true, "", Map.of(), "");
  }

  @Test
  void registerIsVisibleAndBumpsRevision() {
    long before = registry.snapshot(orders).revision();
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    ServiceSnapshot s = registry.snapshot(orders);
    assertThat(s.instances()).extracting(Instance::ip).containsExactly("10.0.0.1");
    assertThat(s.instances().get(0).instanceId()).isEqualTo("10.0.0.1#80#DEFAULT#DEFAULT_GROUP@@orders");
    assertThat(s.revision()).isGreaterThan(before);
    assertThat(changes).containsExactly(orders);
  }

  @Test
  void sameRegistrationTwiceIsANoOp() {
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    long rev = registry.snapshot(orders).revision();
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    assertThat(registry.snapshot(orders).revision()).isEqualTo(rev);
    assertThat(changes).hasSize(1);
  }

  @Test
  void revisionsGrowEvenWhenTheClockStandsStillOrGoesBack() {
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    long r1 = registry.snapshot(orders).revision();
    micros.set(5);
    registry.register(owner("c1"), orders, inst("10.0.0.2", 80));
    assertThat(registry.snapshot(orders).revision()).isEqualTo(r1 + 1);
  }

  @Test
  void deregisterOnlyByOwner() {
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    assertThat(registry.deregister(owner("c2"), orders, inst("10.0.0.1", 80).key())).isFalse();
    assertThat(registry.snapshot(orders).instances()).hasSize(1);
    assertThat(registry.deregister(owner("c1"), orders, inst("10.0.0.1", 80).key())).isTrue();
    assertThat(registry.snapshot(orders).instances()).isEmpty();
    assertThat(registry.serviceCount()).isZero();
  }

  @Test
  void removeOwnerRemovesOnlyItsInstancesOneChangePerService() {
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    registry.register(owner("c1"), orders, inst("10.0.0.1", 81));
    registry.register(owner("c2"), orders, inst("10.0.0.2", 80));
    registry.register(owner("c1"), users, inst("10.0.0.1", 90));
    changes.clear();
    registry.removeOwner(owner("c1"));
    assertThat(registry.snapshot(orders).instances()).extracting(Instance::ip).containsExactly("10.0.0.2");
    assertThat(registry.snapshot(users).instances()).isEmpty();
    assertThat(changes).containsExactlyInAnyOrder(orders, users);
  }

  @Test
  void takeoverByAnotherOwnerSurvivesTheFirstOwnersEnd() {
    registry.register(owner("old"), orders, inst("10.0.0.1", 80));
    registry.register(owner("new"), orders, inst("10.0.0.1", 80));
    registry.removeOwner(owner("old"));
    assertThat(registry.snapshot(orders).instances()).hasSize(1);
  }

  @Test
  void replaceOwnedIsOneChange() {
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    changes.clear();
    registry.replaceOwned(owner("c1"), orders, List.of(inst("10.0.0.2", 80), inst("10.0.0.3", 80)));
    assertThat(registry.snapshot(orders).instances()).extracting(Instance::ip).containsExactly("10.0.0.2", "10.0.0.3");
    assertThat(changes).containsExactly(orders);
  }

  @Test
  void absentServiceNeverReportsAnOlderRevisionThanItsLastState() {
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    registry.removeOwner(owner("c1"));
    long last = registry.absentRevision();
    assertThat(registry.snapshot(orders).revision()).isEqualTo(last);
    assertThat(last).isGreaterThan(registry.bootRevision());
  }

  @Test
  void listServicesPagesSortedWithinNamespaceAndGroup() {
    for (String n : List.of("c", "a", "b", "d")) {
      registry.register(owner("c1"), ServiceKey.of("", "", n), inst("10.0.0.1", 80));
    }
    registry.register(owner("c1"), ServiceKey.of("", "other", "z"), inst("10.0.0.1", 80));
    registry.register(owner("c1"), ServiceKey.of("dev", "", "x"), inst("10.0.0.1", 80));
    Registry.ServicePage p1 = registry.listServices("public", "DEFAULT_GROUP", 1, 3);
    assertThat(p1.total()).isEqualTo(4);
    assertThat(p1.services()).extracting(ServiceKey::name).containsExactly("a", "b", "c");
    assertThat(registry.listServices("public", "DEFAULT_GROUP", 2, 3).services()).extracting(ServiceKey::name)
        .containsExactly("d");
    assertThat(registry.listServices("public", "", 1, 10).total()).isEqualTo(5);
    assertThat(registry.listServices("dev", "", 1, 10).services()).extracting(ServiceKey::name).containsExactly("x");
    assertThat(registry.listServices("nope", "", 1, 10).total()).isZero();
  }

  /** An instance with about {@code bytes} of metadata (in values of 1,000 characters). */
  private static Instance withMetadata(String ip, int bytes) {
    return new Instance(ip, 80, 1, true, true, true, "", blob(bytes), "");
  }

  private static Map<String, String> blob(int bytes) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; bytes > 0; i++, bytes -= 1000) {
      m.put("k" + i, "x".repeat(Math.min(1000, bytes)));
    }
    return m;
  }

  @Test
  void aRegistrationOverTheInstanceLimitIsRefusedAndChangesNothing() {
    registry = new Registry(micros::get, new ServiceLimits(2, 1 << 20));
    registry.addListener(c -> changes.add(c.service()));
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    registry.register(owner("c2"), orders, inst("10.0.0.2", 80));
    long revision = registry.snapshot(orders).revision();
    assertThatThrownBy(() -> registry.register(owner("c3"), orders, inst("10.0.0.3", 80)))
        .isInstanceOfSatisfying(RegistryException.class, e -> {
          assertThat(e.kind()).isEqualTo(RegistryException.Kind.RESOURCE_EXHAUSTED);
          assertThat(e.field()).isEqualTo("instance");
        })
        .hasMessage("service public/DEFAULT_GROUP@@orders would have 3 instances (limit: 2, see --max-instances-per-service)");
    // Replacing one that is there is no new instance.
    registry.register(owner("c2"), orders, inst("10.0.0.2", 80).withWeight(2));
    assertThat(registry.snapshot(orders).instances()).hasSize(2);
    assertThat(registry.snapshot(orders).revision()).isGreaterThan(revision);
  }

  @Test
  void aRegistrationOverTheByteLimitIsRefusedNamingServiceValueLimitAndFlag() {
    registry = new Registry(micros::get, new ServiceLimits(100, 10_000));
    registry.addListener(c -> changes.add(c.service()));
    registry.register(owner("c1"), orders, withMetadata("10.0.0.1", 4000));
    registry.register(owner("c1"), orders, withMetadata("10.0.0.2", 4000));
    ServiceSnapshot before = registry.snapshot(orders);
    long bytes = registry.stats(orders).bytes();
    changes.clear();
    assertThatThrownBy(() -> registry.register(owner("c2"), orders, withMetadata("10.0.0.3", 4000)))
        .isInstanceOfSatisfying(RegistryException.class,
            e -> assertThat(e.kind()).isEqualTo(RegistryException.Kind.RESOURCE_EXHAUSTED))
        .hasMessageStartingWith("service public/DEFAULT_GROUP@@orders would hold ")
        .hasMessageContaining("bytes of instances (limit: 10000, see --max-service-bytes");
    assertThat(registry.snapshot(orders)).isSameAs(before);
    assertThat(registry.stats(orders).bytes()).isEqualTo(bytes);
    assertThat(changes).isEmpty();
    // Growing an instance in place counts only the growth; shrinking is always allowed.
    assertThatThrownBy(() -> registry.update(orders, inst("10.0.0.1", 80).key(),
        i -> i.withMetadata(blob(9000)))).isInstanceOf(RegistryException.class);
    registry.update(orders, inst("10.0.0.1", 80).key(), i -> i.withMetadata(Map.of()));
    assertThat(registry.stats(orders).bytes()).isLessThan(bytes - 3900);
    registry.register(owner("c2"), orders, withMetadata("10.0.0.3", 4000));
    assertThat(registry.snapshot(orders).instances()).hasSize(3);
  }

  @Test
  void aBatchIsCheckedAsAWholeAndARefusedOneChangesNothing() {
    registry = new Registry(micros::get, new ServiceLimits(3, 10_000));
    registry.addListener(c -> changes.add(c.service()));
    registry.replaceOwned(owner("c1"), orders, List.of(inst("10.0.0.1", 80), inst("10.0.0.2", 80)));
    ServiceSnapshot before = registry.snapshot(orders);
    assertThatThrownBy(() -> registry.replaceOwned(owner("c2"), orders,
        List.of(inst("10.0.0.3", 80), inst("10.0.0.4", 80))))
        .hasMessage("service public/DEFAULT_GROUP@@orders would have 4 instances (limit: 3, see --max-instances-per-service)")
        .isInstanceOfSatisfying(RegistryException.class, e -> assertThat(e.field()).isEqualTo("instances"));
    assertThat(registry.snapshot(orders)).isSameAs(before);
    // A batch that swaps instances of the same owner counts what is left, not what passes by.
    registry.replaceOwned(owner("c1"), orders, List.of(inst("10.0.0.5", 80), inst("10.0.0.6", 80), inst("10.0.0.7", 80)));
    assertThat(registry.snapshot(orders).instances()).extracting(Instance::ip)
        .containsExactly("10.0.0.5", "10.0.0.6", "10.0.0.7");
    // The bytes of a swap: a shrinking and a growing instance together fit.
    registry.replaceOwned(owner("c1"), orders, List.of(withMetadata("10.0.0.5", 9000)));
    registry.replaceOwned(owner("c1"), orders, List.of(inst("10.0.0.5", 80), withMetadata("10.0.0.6", 9000)));
    assertThat(registry.snapshot(orders).instances()).hasSize(2);
  }

  @Test
  void aRefusalOnAServiceThatDidNotExistLeavesNoServiceBehind() {
    registry = new Registry(micros::get, new ServiceLimits(1, 1000));
    assertThatThrownBy(() -> registry.register(owner("c1"), orders, withMetadata("10.0.0.1", 2000)))
        .isInstanceOf(RegistryException.class);
    assertThat(registry.serviceCount()).isZero();
    assertThat(registry.listServices("public", "", 1, 10).total()).isZero();
    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    assertThat(registry.snapshot(orders).instances()).hasSize(1);
  }

  /** Every listener gets each change as a value (service, owner, what, revision); a throwing one harms no other. */
  @Test
  void changesAreValuesForEveryListener() {
    List<Change> seen = new ArrayList<>();
    registry.addListener(c -> {
      throw new IllegalStateException("a broken listener");
    });
    registry.addListener(seen::add);

    registry.register(owner("c1"), orders, inst("10.0.0.1", 80));
    long registered = registry.snapshot(orders).revision();
    registry.updateSettings(orders, s -> s.withProtectThreshold(0.5));
    long settings = registry.snapshot(orders).revision();
    registry.removeOwner(owner("c1"));

    assertThat(seen).containsExactly(
        new Change(orders, owner("c1"), Change.Kind.REGISTERED, registered),
        new Change(orders, null, Change.Kind.SETTINGS, settings),
        new Change(orders, owner("c1"), Change.Kind.REMOVED, registry.absentRevision()));
    assertThat(changes).containsExactly(orders, orders, orders);
  }

  /** A session owner on a node with no id (a lone registry). */
  private static Owner owner(String connectionId) {
    return Owner.session("", connectionId);
  }
}
