package io.roster.server.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * An operator's {@code enabled=false} (decision 40): it holds while the instance stays
 * registered, whoever registers it again, until an operator enables it or it leaves.
 */
class OperatorHoldTest {

  private final AtomicLong micros = new AtomicLong(1_000_000);
  private final Registry registry = new Registry(micros::incrementAndGet);
  private final ServiceKey orders = ServiceKey.of("", "", "orders");
  private final Owner session = Owner.session("n1", "c1");
  private final Owner nacos = Owner.nacos("n1", "t1");
  private final InstanceKey key = new InstanceKey("10.0.0.1", 80, "DEFAULT");

  private static Instance inst(double weight) {
    return new Instance("10.0.0.1", 80, weight, true, true, true, "", Map.of(), "");
  }

  private void disable(boolean off) {
    new Command.UpdateInstance(orders, key, !off, null, null, false, Map.of(), true).applyTo(registry);
  }

  private boolean visible() {
    return !registry.snapshot(orders).instances().isEmpty();
  }

  @Test
  void theOwnersRegisterAgainAnotherOwnerAndABatchKeepItOutOfTraffic() {
    registry.register(session, orders, inst(1));
    disable(true);
    assertThat(visible()).isFalse();

    registry.register(session, orders, inst(2)); // the owner's redo, with a change
    assertThat(visible()).isFalse();
    assertThat(registry.instance(orders, key).weight()).isEqualTo(2);
    registry.register(nacos, orders, inst(1)); // someone else takes it over
    assertThat(visible()).isFalse();
    registry.replaceOwned(nacos, orders, List.of(inst(3))); // a Nacos connection's batch
    assertThat(visible()).isFalse();
    new Command.UpdateInstance(orders, key, null, 4.0, false, false, Map.of()).applyTo(registry); // no enabled: kept
    assertThat(visible()).isFalse();

    disable(false);
    assertThat(visible()).isTrue();
    registry.register(nacos, orders, inst(1));
    assertThat(visible()).isTrue();
  }

  @Test
  void theHoldEndsWithTheRegistration() {
    registry.register(session, orders, inst(1));
    disable(true);
    registry.removeOwner(session);
    registry.register(session, orders, inst(1));
    assertThat(visible()).as("a new registration, a new instance").isTrue();
  }

  @Test
  void aDisableWithoutHoldIsUndoneByTheNextRegistrationAndEnablingEndsAHold() {
    registry.register(session, orders, inst(1));
    Command.UpdateInstance.enabled(orders, key, false).applyTo(registry); // Admin/DrainInstance
    assertThat(visible()).isFalse();
    registry.register(session, orders, inst(1));
    assertThat(visible()).as("decision 10: the owner's redo decides").isTrue();

    disable(true);
    Command.UpdateInstance.enabled(orders, key, false).applyTo(registry); // a drain of a held one: still held
    registry.register(session, orders, inst(1));
    assertThat(visible()).isFalse();
    Command.UpdateInstance.enabled(orders, key, true).applyTo(registry);
    registry.register(session, orders, inst(1));
    assertThat(visible()).isTrue();
  }

  @Test
  void anOwnerThatRegistersItDisabledIsNotAnOperatorsHold() {
    registry.register(session, orders, inst(1).withEnabled(false));
    assertThat(visible()).isFalse();
    registry.register(session, orders, inst(1));
    assertThat(visible()).isTrue();
  }
}
