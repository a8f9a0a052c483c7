package io.roster.server.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Command;
import io.roster.server.registry.HealthCheck;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import io.roster.server.time.FakeScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HealthProbesTest {

  private static final ServiceKey DB = new ServiceKey("public", "DEFAULT_GROUP", "db");
  private static final Duration INTERVAL = Duration.ofSeconds(3);
  private static final HealthProbes.Timing TIMING = new HealthProbes.Timing(INTERVAL, 3);

  private final FakeScheduler time = new FakeScheduler();
  private final Registry registry = new Registry(() -> time.currentTimeMillis() * 1000);
  private final List<Command<?>> written = new ArrayList<>();
  private final Writer writer = new Writer() {
    @Override
    public <R> CompletableFuture<R> submit(Command<R> command) {
      written.add(command);
      return CompletableFuture.completedFuture(command.applyTo(registry));
    }
  };
  /** Ports that answer; every other port is "down". */
  private final Set<Integer> up = new HashSet<>();
  private final List<String> probed = new ArrayList<>();
  private final Probes probes = new Probes() {
    @Override
    public void probe(String ip, int port, HealthCheck check, Consumer<Outcome> done) {
      probed.add(ip + ":" + port);
      done.accept(up.contains(port) ? Outcome.HEALTHY : Outcome.unhealthy("refused"));
    }
  };
  private final List<HealthProbes> started = new ArrayList<>();

  @AfterEach
  void close() {
    started.forEach(HealthProbes::close);
  }

  private HealthProbes start(HealthProbes.Live live) {
    HealthProbes p = new HealthProbes(registry, writer, probes, time, () -> live, TIMING);
    p.start();
    started.add(p);
    return p;
  }

  private Instance persistent(int port) {
    Instance i = new Instance("10.0.0.1", port, 1, true, true, false, "DEFAULT", Map.of(), null);
    return registry.register(Owner.PERSISTENT, DB, i);
  }

  @Test
  void threeFailuresInARowFlipAnInstanceAndOnlyTheFlipIsWritten() {
    up.add(5432);
    persistent(5432);
    start(HealthProbes.Live.standalone());
    time.advance(INTERVAL.multipliedBy(3));
    assertThat(probed).hasSizeGreaterThanOrEqualTo(3).containsOnly("10.0.0.1:5432");
    assertThat(written).as("probes that agree write nothing").isEmpty();

    up.clear();
    time.advance(INTERVAL.multipliedBy(2));
    assertThat(registry.instance(DB, new InstanceKey("10.0.0.1", 5432, "DEFAULT")).healthy())
        .as("two failures are not enough").isTrue();
    time.advance(INTERVAL);
    assertThat(registry.instance(DB, new InstanceKey("10.0.0.1", 5432, "DEFAULT")).healthy()).isFalse();
    assertThat(written).hasSize(1);

    time.advance(INTERVAL.multipliedBy(5));
    assertThat(written).as("failures that agree with the stored health write nothing more").hasSize(1);
    up.add(5432);
    time.advance(INTERVAL.multipliedBy(2));
    assertThat(registry.instance(DB, new InstanceKey("10.0.0.1", 5432, "DEFAULT")).healthy())
        .as("back up: two answers are not enough either").isFalse();
    time.advance(INTERVAL);
    assertThat(registry.instance(DB, new InstanceKey("10.0.0.1", 5432, "DEFAULT")).healthy()).isTrue();
    assertThat(written).hasSize(2);
  }

  @Test
  void eachInstanceIsProbedOncePerIntervalAndTheCheckPortIsUsed() {
    for (int port = 1000; port < 1100; port++) {
      persistent(port);
    }
    registry.updateSettings(DB, s -> s.withChecks(Map.of("DEFAULT", HealthCheck.tcp(9000))));
    start(HealthProbes.Live.standalone());
    time.advance(INTERVAL); // first probes spread over the first interval
    probed.clear();
    time.advance(INTERVAL);
    assertThat(probed).hasSize(100).containsOnly("10.0.0.1:9000");
  }

  @Test
  void ephemeralInstancesAndClustersWithoutAProbeAreNotProbed() {
    Owner session = new Owner("n1", Owner.Kind.SESSION, "s1");
    registry.register(session, new ServiceKey("public", "DEFAULT_GROUP", "api"),
        new Instance("10.0.0.2", 80, 1, true, true, true, "DEFAULT", Map.of(), null));
    registry.register(Owner.PERSISTENT, DB, new Instance("10.0.0.1", 5432, 1, true, true, false, "manual", Map.of(),
        null));
    registry.updateSettings(DB, s -> s.withChecks(Map.of("manual", HealthCheck.NONE)));
    start(HealthProbes.Live.standalone());
    time.advance(INTERVAL.multipliedBy(4));
    assertThat(probed).isEmpty();
    assertThat(written).isEmpty();
  }

  @Test
  void membersShareTheInstancesOncePerInstanceAndEvenly() {
    for (int port = 1; port <= 3000; port++) {
      persistent(port);
    }
    List<String> members = List.of("m1", "m2", "m3");
    Map<String, HealthProbes> probers = new HashMap<>();
    for (String m : members) {
      probers.put(m, start(new HealthProbes.Live(m, members)));
    }
    time.advance(HealthProbes.TICK);
    Map<InstanceKey, String> by = new HashMap<>();
    for (String m : members) {
      Set<InstanceKey> mine = probers.get(m).targets().getOrDefault(DB, Set.of());
      assertThat(mine.size()).as("member %s's share", m).isCloseTo(1000, within(200));
      mine.forEach(k -> assertThat(by.put(k, m)).as("probed by one member only: %s", k).isNull());
    }
    assertThat(by).hasSize(3000);
  }

  @Test
  void whenAMemberGoesItsInstancesMoveWithinASecondAndNoOtherMoves() {
    for (int port = 1; port <= 300; port++) {
      persistent(port);
    }
    List<String> three = new ArrayList<>(List.of("m1", "m2", "m3"));
    HealthProbes.Live[] live = {new HealthProbes.Live("m1", three)};
    HealthProbes m1 = new HealthProbes(registry, writer, probes, time, () -> live[0], TIMING);
    m1.start();
    started.add(m1);
    time.advance(INTERVAL.multipliedBy(2));
    Set<InstanceKey> before = m1.targets().get(DB);
    Set<InstanceKey> ofM2 = new HashSet<>();
    for (int port = 1; port <= 300; port++) {
      long hash = HealthProbes.hash(DB, new InstanceKey("10.0.0.1", port, "DEFAULT"));
      if ("m2".equals(HealthProbes.prober(hash, three))) {
        ofM2.add(new InstanceKey("10.0.0.1", port, "DEFAULT"));
      }
    }

    live[0] = new HealthProbes.Live("m1", List.of("m1", "m3"));
    probed.clear();
    time.advance(HealthProbes.TAKEOVER_WITHIN.plus(HealthProbes.TICK));
    Set<InstanceKey> after = m1.targets().get(DB);
    assertThat(after).containsAll(before);
    Set<InstanceKey> gained = new HashSet<>(after);
    gained.removeAll(before);
    assertThat(gained).as("only the departed member's instances move").isSubsetOf(ofM2).isNotEmpty();
    for (InstanceKey k : gained) {
      assertThat(probed).as("a taken-over instance is probed within %s", HealthProbes.TAKEOVER_WITHIN)
          .contains(k.ip() + ":" + k.port());
    }
  }
}
