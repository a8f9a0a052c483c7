package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A client moved from session A to session B; a change A sent before the move is applied after
 * B's redo (a cluster's log orders two members' entries as they come). It must not take the
 * instance back: A's end would then remove a live client's instance.
 */
class ClaimTest {

  private static final ServiceKey SVC = ServiceKey.of("public", "DEFAULT_GROUP", "svc");
  private static final Owner A = Owner.session("m1@x", "a");
  private static final Owner B = Owner.session("m2@y", "b");
  private static final Claim OLD = new Claim("client-1", 100);
  private static final Claim NEW = new Claim("client-1", 200);

  private final Registry registry = new Registry(() -> 0);

  private static Instance instance(int port) {
    return new Instance("10.0.0.1", port, 1, true, true, true, "DEFAULT", Map.of(), "");
  }

  @Test
  void aLateChangeFromTheClientsOlderSessionLeavesTheInstanceWithTheNewerOne() {
    registry.register(A, OLD, SVC, instance(1));
    registry.replaceOwned(B, NEW, SVC, List.of(instance(1), instance(2))); // B's redo
    registry.register(A, OLD, SVC, instance(1));                            // A's late register
    registry.replaceOwned(A, OLD, SVC, List.of(instance(1), instance(2)));  // or a late batch
    registry.removeOwner(A);                                                // A's end

    assertThat(registry.snapshot(SVC).instances()).extracting(Instance::port).containsExactlyInAnyOrder(1, 2);
    assertThat(registry.owns(B, SVC, instance(1).key())).isTrue();
    assertThat(registry.ownedCount(B)).isEqualTo(2);
  }

  @Test
  void anotherClientOrAnUnclaimedRegistrationStillTakesItOver() {
    registry.register(B, NEW, SVC, instance(1));
    registry.register(A, new Claim("client-2", 1), SVC, instance(1));
    assertThat(registry.ownerOf(SVC, instance(1).key())).isEqualTo(A);
    registry.register(B, Claim.NONE, SVC, instance(1));
    assertThat(registry.ownerOf(SVC, instance(1).key())).isEqualTo(B);
  }

  @Test
  void theNewerSessionTakesOverFromTheOlder() {
    registry.register(A, OLD, SVC, instance(1));
    registry.register(B, NEW, SVC, instance(1));
    assertThat(registry.ownerOf(SVC, instance(1).key())).isEqualTo(B);
    registry.removeOwner(A);
    assertThat(registry.snapshot(SVC).instances()).hasSize(1);
  }
}
