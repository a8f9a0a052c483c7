package io.roster.server.naming;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Change;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Heartbeat instances on a fake clock: renewal, unhealthy, removal, timings from metadata, limits. */
class LeasesTest {

  private final FakeScheduler time = new FakeScheduler();
  private final Registry registry = new Registry(() -> time.currentTimeMillis() * 1000);
  private final List<Change.Kind> changes = new CopyOnWriteArrayList<>();
  private final ServiceKey orders = ServiceKey.of("", "", "orders");
  private Leases leases;

  @BeforeEach
  void setUp() {
    registry.addListener(c -> changes.add(c.kind()));
    leases = new Leases(Writer.direct(registry), registry, time, () -> "n1", 3);
  }

  private static Instance inst(String ip, int port, Map<String, String> metadata) {
    return new Instance(ip, port, 1, true, true, true, "", metadata, "");
  }

  private static InstanceKey key(String ip, int port) {
    return new InstanceKey(ip, port, "DEFAULT");
  }

  private Instance stored(String ip, int port) {
    return registry.instance(orders, key(ip, port));
  }

  @Test
  void aSilentInstanceTurnsUnhealthyAfter15sAndGoesAfter30s() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of()), "10.0.0.1").join();
    assertThat(registry.ownerOf(orders, key("10.0.0.1", 80)).kind()).isEqualTo(Owner.Kind.LEASE);
    changes.clear();

    time.advance(Duration.ofMillis(14_900));
    assertThat(stored("10.0.0.1", 80).healthy()).isTrue();
    time.advance(Duration.ofMillis(200));
    assertThat(stored("10.0.0.1", 80).healthy()).isFalse();
    assertThat(changes).containsExactly(Change.Kind.UPDATED);

    time.advance(Duration.ofMillis(14_800));
    assertThat(stored("10.0.0.1", 80)).isNotNull();
    time.advance(Duration.ofMillis(200));
    assertThat(stored("10.0.0.1", 80)).isNull();
    assertThat(changes).containsExactly(Change.Kind.UPDATED, Change.Kind.REMOVED);
    assertThat(leases.count()).isZero();
    assertThat(leases.beat(orders, key("10.0.0.1", 80))).isNull();
  }

  @Test
  void beatsKeepItHealthyAndABeatAfterTheTimeoutMakesItHealthyAgain() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join();
    for (int i = 0; i < 10; i++) {
      time.advance(Duration.ofSeconds(5));
      assertThat(leases.beat(orders, key("10.0.0.1", 80))).isEqualTo(Duration.ofSeconds(5));
    }
    assertThat(stored("10.0.0.1", 80).healthy()).isTrue();

    time.advance(Duration.ofSeconds(16));
    assertThat(stored("10.0.0.1", 80).healthy()).isFalse();
    leases.beat(orders, key("10.0.0.1", 80));
    assertThat(stored("10.0.0.1", 80).healthy()).isTrue();
    time.advance(Duration.ofSeconds(29));
    assertThat(stored("10.0.0.1", 80)).isNotNull();
  }

  @Test
  void timingsComeFromTheInstancesMetadataInMilliseconds() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of(Leases.Timeouts.INTERVAL, "500",
        Leases.Timeouts.TIMEOUT, "1000", Leases.Timeouts.DELETE, "2000")), "h").join();
    assertThat(leases.beat(orders, key("10.0.0.1", 80))).isEqualTo(Duration.ofMillis(500));
    time.advance(Duration.ofMillis(1001));
    assertThat(stored("10.0.0.1", 80).healthy()).isFalse();
    time.advance(Duration.ofSeconds(1));
    assertThat(stored("10.0.0.1", 80)).isNull();
  }

  @Test
  void registeringAgainTakesNewTimingsAndRenews() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join();
    time.advance(Duration.ofSeconds(10));
    leases.register(orders, inst("10.0.0.1", 80, Map.of(Leases.Timeouts.TIMEOUT, "6000",
        Leases.Timeouts.DELETE, "8000")), "h").join();
    time.advance(Duration.ofMillis(6001));
    assertThat(stored("10.0.0.1", 80).healthy()).isFalse();
    time.advance(Duration.ofSeconds(2));
    assertThat(stored("10.0.0.1", 80)).isNull();
  }

  @Test
  void badTimingsAreRefusedNamingTheKeyAndNothingIsRegistered() {
    assertThatThrownBy(() -> leases.register(orders, inst("10.0.0.1", 80, Map.of(Leases.Timeouts.TIMEOUT, "soon")), "h"))
        .isInstanceOf(RegistryException.class)
        .hasMessage("metadata.preserved.heart.beat.timeout: \"soon\" (expected: milliseconds 100..86400000)");
    assertThatThrownBy(() -> leases.register(orders, inst("10.0.0.1", 80, Map.of(Leases.Timeouts.INTERVAL, "10000",
        Leases.Timeouts.TIMEOUT, "5000")), "h"))
        .hasMessage("metadata.preserved.heart.beat.timeout: 5000 (expected: at least preserved.heart.beat.interval "
            + "(10000 ms))");
    assertThat(stored("10.0.0.1", 80)).isNull();
    assertThat(leases.count()).isZero();
  }

  @Test
  void aLeaseWhoseInstanceSomeoneElseRegisteredIsDroppedAndNeverRemovesIt() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join();
    Owner session = Owner.session("n1", "c1");
    registry.register(session, orders, inst("10.0.0.1", 80, Map.of()));

    assertThat(leases.beat(orders, key("10.0.0.1", 80))).as("unknown here: register again").isNull();
    assertThat(registry.owners(o -> o.kind() == Owner.Kind.LEASE)).as("the registry forgets the empty owner").isEmpty();
    time.advance(Duration.ofSeconds(40));
    assertThat(stored("10.0.0.1", 80).healthy()).isTrue();
    assertThat(registry.ownerOf(orders, key("10.0.0.1", 80))).isEqualTo(session);
  }

  @Test
  void anExpiryDoesNotTouchAnInstanceThatMovedAfterItWasMarkedUnhealthy() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join();
    time.advance(Duration.ofSeconds(16));
    Owner session = Owner.session("n1", "c1");
    registry.register(session, orders, inst("10.0.0.1", 80, Map.of()));
    time.advance(Duration.ofSeconds(20));
    assertThat(registry.ownerOf(orders, key("10.0.0.1", 80))).isEqualTo(session);
  }

  @Test
  void oneAddressHoldsAtMostTheLimitAndDeregisteringGivesRoomBack() {
    for (int i = 1; i <= 3; i++) {
      leases.register(orders, inst("10.0.0.1", i, Map.of()), "10.9.9.9").join();
    }
    assertThatThrownBy(() -> leases.register(orders, inst("10.0.0.1", 4, Map.of()), "10.9.9.9"))
        .isInstanceOf(RegistryException.class)
        .hasMessageContaining("already hold 3 heartbeat instances (limit: 3, see --max-instances-per-address)");
    leases.register(orders, inst("10.0.0.1", 5, Map.of()), "10.8.8.8").join();
    leases.register(orders, inst("10.0.0.1", 1, Map.of()), "10.9.9.9").join(); // again: no new room needed

    assertThat(leases.deregister(orders, key("10.0.0.1", 1)).join()).isTrue();
    assertThat(stored("10.0.0.1", 1)).isNull();
    leases.register(orders, inst("10.0.0.1", 4, Map.of()), "10.9.9.9").join();
    assertThat(leases.deregister(orders, key("10.0.0.1", 99)).join()).isFalse();
  }

  /** Refuses owners' ends while {@link #refuseEnds} is set, as a cluster member cut off from the log. */
  private volatile boolean refuseEnds;

  private Leases withFlakyEnds() {
    Writer direct = Writer.direct(registry);
    Writer flaky = new Writer() {
      @Override
      public <R> java.util.concurrent.CompletableFuture<R> submit(io.roster.server.registry.Command<R> command) {
        if (refuseEnds && command instanceof io.roster.server.registry.Command.RemoveOwner) {
          return java.util.concurrent.CompletableFuture.failedFuture(new RegistryException(
              RegistryException.Kind.UNAVAILABLE, "", "cut off"));
        }
        return direct.submit(command);
      }
    };
    return new Leases(flaky, registry, time, () -> "n1", 10);
  }

  /**
   * An expiry the log did not take is tried again until it is applied; meanwhile the client
   * registered the instance again: the late end of the old lease must not remove it.
   */
  @Test
  void aLateEndOfAnOldLeaseNeverRemovesANewerRegistration() {
    Leases l = withFlakyEnds();
    l.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join();
    refuseEnds = true;
    time.advance(Duration.ofSeconds(31));
    assertThat(stored("10.0.0.1", 80)).as("its end was refused").isNotNull();
    assertThat(l.holds(orders, key("10.0.0.1", 80))).isFalse();

    l.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join(); // the client's beat got 20404
    refuseEnds = false;
    time.advance(Leases.RETRY_AFTER);
    assertThat(stored("10.0.0.1", 80)).isNotNull();
    assertThat(l.beat(orders, key("10.0.0.1", 80))).isNotNull();
  }

  @Test
  void aDeregisterTheLogRefusedIsTriedAgain() {
    Leases l = withFlakyEnds();
    l.register(orders, inst("10.0.0.1", 80, Map.of()), "h").join();
    refuseEnds = true;
    assertThat(l.deregister(orders, key("10.0.0.1", 80))).isCompletedExceptionally();
    refuseEnds = false;
    time.advance(Leases.RETRY_AFTER);
    assertThat(stored("10.0.0.1", 80)).isNull();
    assertThat(registry.owners(o -> o.kind() == Owner.Kind.LEASE)).isEmpty();
  }

  /**
   * A registration still on its way to the log when its lease is deregistered: once applied,
   * nothing would time it, so its owner is ended instead of leaving an instance that never expires.
   */
  @Test
  void aRegistrationAppliedAfterItsLeaseWasDroppedIsEnded() {
    java.util.List<Runnable> pending = new java.util.ArrayList<>();
    Writer direct = Writer.direct(registry);
    Writer slowRegisters = new Writer() {
      @Override
      @SuppressWarnings("unchecked")
      public <R> java.util.concurrent.CompletableFuture<R> submit(io.roster.server.registry.Command<R> command) {
        if (command instanceof io.roster.server.registry.Command.Register) {
          java.util.concurrent.CompletableFuture<R> later = new java.util.concurrent.CompletableFuture<>();
          pending.add(() -> later.complete(command.applyTo(registry)));
          return later;
        }
        return direct.submit(command);
      }
    };
    Leases l = new Leases(slowRegisters, registry, time, () -> "n1", 10);
    var registering = l.register(orders, inst("10.0.0.1", 80, Map.of()), "h");
    assertThat(l.deregister(orders, key("10.0.0.1", 80)).join()).isTrue();
    pending.forEach(Runnable::run);
    assertThat(registering).isCompleted();
    assertThat(stored("10.0.0.1", 80)).isNull();
    assertThat(registry.owners(o -> o.kind() == Owner.Kind.LEASE)).isEmpty();
  }

  @Test
  void aRefusedRegistrationLeavesNoLease() {
    Registry small = new Registry(() -> time.currentTimeMillis() * 1000,
        new io.roster.server.registry.ServiceLimits(1, 1024 * 1024));
    Leases l = new Leases(Writer.direct(small), small, time, () -> "n1", 10);
    l.register(orders, inst("10.0.0.1", 1, Map.of()), "h").join();
    assertThatThrownBy(() -> l.register(orders, inst("10.0.0.1", 2, Map.of()), "h").join())
        .hasRootCauseInstanceOf(RegistryException.class);
    assertThat(l.count()).isEqualTo(1);
  }

  /**
   * An operator's deregistration of a heartbeat instance reaches it wherever its lease is held:
   * this member ends its own lease; a lease another member holds is ended through the log.
   */
  @Test
  void endAnywhereEndsAHeldLeaseHereAndAnotherMembersThroughTheLog() {
    leases.register(orders, inst("10.0.0.1", 80, Map.of()), "10.0.0.1").join();
    Owner here = registry.ownerOf(orders, key("10.0.0.1", 80));
    leases.endAnywhere(orders, key("10.0.0.1", 80), here).join();
    assertThat(stored("10.0.0.1", 80)).isNull();
    assertThat(leases.count()).isZero();

    Owner elsewhere = new Owner("n2@k1", Owner.Kind.LEASE, "10.0.0.2#80#DEFAULT");
    registry.register(elsewhere, orders, inst("10.0.0.2", 80, Map.of()));
    leases.endAnywhere(orders, key("10.0.0.2", 80), elsewhere).join();
    assertThat(stored("10.0.0.2", 80)).isNull();
  }
}
