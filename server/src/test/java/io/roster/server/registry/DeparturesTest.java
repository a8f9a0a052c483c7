package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * What a warming node lists as departed in its states (decision 20): the instances it saw leave
 * through a deregistration, a batch, a drain or the end of their owner, and the disabled ones,
 * but not those of an owner ended for want of news of it, nor anything once it is warm.
 */
class DeparturesTest {

  private final AtomicLong micros = new AtomicLong(1_000_000);
  private final Registry registry = new Registry(micros::get);
  private final ServiceKey orders = ServiceKey.of("", "", "orders");
  private final Owner alice = Owner.session("n1", "alice");
  private final Owner bob = Owner.session("n1", "bob");

  DeparturesTest() {
    registry.recordDepartures(true);
  }

  private static Instance inst(String ip, int port) {
    return new Instance(ip, port, 1, true, true, true, "", Map.of(), "");
  }

  private static InstanceKey key(String ip, int port) {
    return new InstanceKey(ip, port, "DEFAULT");
  }

  private List<InstanceKey> departed() {
    return registry.snapshot(orders).departed();
  }

  @Test
  void aDeregisteredInstanceIsListedUntilItIsRegisteredAgain() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.register(alice, orders, inst("10.0.0.2", 80));
    registry.deregister(alice, orders, key("10.0.0.1", 80));
    assertThat(departed()).containsExactly(key("10.0.0.1", 80));

    registry.register(bob, orders, inst("10.0.0.1", 80));
    assertThat(departed()).as("back: no longer departed").isEmpty();
  }

  @Test
  void theEndOfAnOwnerListsItsInstancesAlsoWhenTheServiceIsGone() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.register(alice, orders, inst("10.0.0.2", 80));
    registry.removeOwner(alice);
    assertThat(registry.snapshot(orders).instances()).isEmpty();
    assertThat(departed()).containsExactly(key("10.0.0.1", 80), key("10.0.0.2", 80));
  }

  @Test
  void aBatchAndADrainListWhatTheyDrop() {
    registry.replaceOwned(alice, orders, List.of(inst("10.0.0.1", 80), inst("10.0.0.2", 80)));
    registry.replaceOwned(alice, orders, List.of(inst("10.0.0.2", 80)));
    assertThat(departed()).containsExactly(key("10.0.0.1", 80));
    registry.removeOwned(alice, orders);
    assertThat(departed()).containsExactly(key("10.0.0.1", 80), key("10.0.0.2", 80));
  }

  @Test
  void anOwnerEndedForWantOfNewsIsNotADepartureSeenHere() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.removeOwner(alice, false);
    assertThat(registry.snapshot(orders).instances()).isEmpty();
    assertThat(departed()).isEmpty();
  }

  @Test
  void aDisabledInstanceIsListedAndAnEnabledOneIsNot() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.register(alice, orders, inst("10.0.0.2", 80));
    registry.setEnabled(orders, key("10.0.0.2", 80), false);
    assertThat(departed()).containsExactly(key("10.0.0.2", 80));
    registry.setEnabled(orders, key("10.0.0.2", 80), true);
    assertThat(departed()).isEmpty();
  }

  @Test
  void aViewListsOnlyTheDeparturesOfItsClusters() {
    registry.register(alice, orders, new Instance("10.0.0.1", 80, 1, true, true, true, "east", Map.of(), ""));
    registry.register(alice, orders, new Instance("10.0.0.2", 80, 1, true, true, true, "west", Map.of(), ""));
    registry.removeOwner(alice);
    assertThat(registry.snapshot(orders).view(Set.of("east"), false).departed())
        .containsExactly(new InstanceKey("10.0.0.1", 80, "east"));
  }

  @Test
  void nothingIsListedOnceWarmAndTheChecksumIgnoresTheList() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.register(alice, orders, inst("10.0.0.2", 80));
    registry.deregister(alice, orders, key("10.0.0.1", 80));
    String listing = registry.snapshot(orders).checksum();

    registry.recordDepartures(false);
    registry.register(alice, orders, inst("10.0.0.3", 80));
    registry.deregister(alice, orders, key("10.0.0.3", 80));
    assertThat(departed()).isEmpty();
    assertThat(registry.snapshot(orders).checksum()).isEqualTo(listing);
  }

  @Test
  void aServiceListsAtMostTheBound() {
    List<Instance> many = new ArrayList<>();
    for (int i = 0; i < ServiceSnapshot.MAX_DEPARTED + 5; i++) {
      many.add(inst("10.1." + (i / 250) + "." + (i % 250), 80));
    }
    registry.replaceOwned(alice, orders, many);
    registry.register(bob, orders, inst("10.0.0.9", 80));
    registry.removeOwner(alice);
    assertThat(departed()).hasSize(ServiceSnapshot.MAX_DEPARTED);
  }

  @Test
  void aStateReadBeforeTheWarmUpEndedIsNotServedWithItsListAfter() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.register(alice, orders, inst("10.0.0.2", 80));
    registry.deregister(alice, orders, key("10.0.0.1", 80));
    assertThat(departed()).hasSize(1); // read while warming: kept for later reads
    registry.recordDepartures(false);
    assertThat(departed()).isEmpty();
  }

  @Test
  void aSnapshotLoadedWhileWarmingKeepsTheDeparturesItDoesNotHaveAgain() {
    registry.register(alice, orders, inst("10.0.0.1", 80));
    registry.register(alice, orders, inst("10.0.0.2", 80));
    registry.removeOwner(alice);
    Registry other = new Registry(micros::get);
    other.register(bob, orders, inst("10.0.0.2", 80));
    registry.restore(other.image());
    assertThat(departed()).as("10.0.0.2 is back in the image; 10.0.0.1 is still gone")
        .containsExactly(key("10.0.0.1", 80));
  }
}
