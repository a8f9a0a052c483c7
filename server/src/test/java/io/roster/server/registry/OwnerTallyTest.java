package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The registry keeps every owner's count exact, so limits are checked in O(1). */
class OwnerTallyTest {

  private final Registry registry = new Registry(() -> 1);
  private final ServiceKey orders = ServiceKey.of("", "", "orders");
  private final ServiceKey users = ServiceKey.of("", "", "users");

  private static Instance at(String ip, int port) {
    return new Instance(ip, port, 1, true, true, true, "", Map.of(), "");
  }

  @Test
  void countsFollowRegistrationsMovesAndRemovals() {
    Tally address = Tally.standalone();
    Tally a = new Tally(address);
    Tally b = new Tally(address);
    registry.attachOwner(owner("a"), a);
    registry.attachOwner(owner("b"), b);

    registry.register(owner("a"), orders, at("10.0.0.1", 1));
    registry.register(owner("a"), orders, at("10.0.0.1", 1)); // same identity: not a second one
    registry.register(owner("a"), users, at("10.0.0.1", 2));
    assertThat(a.count()).isEqualTo(2);
    assertThat(registry.ownedCount(owner("a"), orders)).isEqualTo(1);

    // b takes over a's instance (a redo on a new session): the count moves with it.
    registry.register(owner("b"), orders, at("10.0.0.1", 1));
    assertThat(a.count()).isEqualTo(1);
    assertThat(b.count()).isEqualTo(1);
    assertThat(registry.ownedCount(owner("a"), orders)).isZero();
    assertThat(registry.ownerOf(orders, at("10.0.0.1", 1).key())).isEqualTo(owner("b"));
    assertThat(address.count()).isEqualTo(2);

    registry.replaceOwned(owner("b"), orders, List.of(at("10.0.0.2", 1), at("10.0.0.2", 2)));
    assertThat(b.count()).isEqualTo(2);
    assertThat(registry.deregister(owner("b"), orders, at("10.0.0.2", 1).key())).isTrue();
    assertThat(b.count()).isEqualTo(1);

    registry.removeOwner(owner("a"));
    registry.removeOwner(owner("b"));
    assertThat(a.count()).isZero();
    assertThat(b.count()).isZero();
    assertThat(address.count()).isZero();
    assertThat(registry.ownedCount(owner("a"))).isZero();
  }

  /** The per-owner index answers "services of owner X", following moves, without the caller's help. */
  @Test
  void servicesOfFollowRegistrationsAndMoves() {
    registry.register(owner("a"), orders, at("10.0.0.1", 1));
    registry.register(owner("a"), users, at("10.0.0.1", 2));
    assertThat(registry.servicesOf(owner("a"))).containsExactlyInAnyOrder(orders, users);

    registry.register(owner("b"), orders, at("10.0.0.1", 1)); // moves a's only instance of orders
    assertThat(registry.servicesOf(owner("a"))).containsExactly(users);
    assertThat(registry.servicesOf(owner("b"))).containsExactly(orders);

    registry.removeOwner(owner("a"));
    assertThat(registry.servicesOf(owner("a"))).isEmpty();
    assertThat(registry.snapshot(users).instances()).isEmpty();
    assertThat(registry.snapshot(orders).instances()).hasSize(1);
  }

  /** A session owner on a node with no id (a lone registry). */
  private static Owner owner(String connectionId) {
    return Owner.session("", connectionId);
  }
}
