package io.roster.server.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ServiceDeltaTest {

  private final ServiceKey key = ServiceKey.of("", "", "delta");

  private static Instance inst(String ip, int port, String cluster, double weight) {
    return new Instance(ip, port, weight, true, true, true, cluster, Map.of(), "");
  }

  @Test
  void aDeltaCarriesOnlyWhatChangedAndRebuildsTheTarget() {
    ServiceSnapshot base = ServiceSnapshot.of(key, List.of(inst("10.0.0.1", 80, "", 1), inst("10.0.0.2", 80, "", 1),
        inst("10.0.0.3", 80, "", 1)), 10);
    ServiceSnapshot target = ServiceSnapshot.of(key, List.of(inst("10.0.0.1", 80, "", 1), inst("10.0.0.2", 80, "", 5),
        inst("10.0.0.4", 80, "", 1)), 11);
    ServiceDelta d = ServiceDelta.between(base, target);
    assertThat(d.upserted()).extracting(Instance::ip).containsExactly("10.0.0.2", "10.0.0.4");
    assertThat(d.removed()).containsExactly(new InstanceKey("10.0.0.3", 80, "DEFAULT"));
    assertThat(d.size()).isEqualTo(3);
    assertThat(d.applyTo(base.instances())).isEqualTo(target.instances());
  }

  @Test
  void randomChangesRoundTrip() {
    Random random = new Random(42);
    List<Instance> all = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      all.add(inst("10.0." + random.nextInt(3) + "." + random.nextInt(20), 80 + random.nextInt(3),
          random.nextBoolean() ? "a" : "b", 1));
    }
    for (int round = 0; round < 200; round++) {
      List<Instance> from = pick(all, random);
      List<Instance> to = pick(all, random);
      to.replaceAll(i -> random.nextInt(4) == 0 ? i.withWeight(2) : i);
      ServiceSnapshot base = ServiceSnapshot.of(key, from, 1);
      ServiceSnapshot target = ServiceSnapshot.of(key, to, 2);
      assertThat(ServiceDelta.between(base, target).applyTo(base.instances())).isEqualTo(target.instances());
      // Through a clusters filter, as pushes see them.
      ServiceSnapshot baseA = base.view(Set.of("a"), false);
      ServiceSnapshot targetA = target.view(Set.of("a"), false);
      assertThat(ServiceDelta.between(baseA, targetA).applyTo(baseA.instances())).isEqualTo(targetA.instances());
    }
  }

  /** A random subset without duplicate identities. */
  private static List<Instance> pick(List<Instance> all, Random random) {
    Map<InstanceKey, Instance> m = new java.util.HashMap<>();
    for (Instance i : all) {
      if (random.nextInt(3) > 0) {
        m.put(i.key(), i);
      }
    }
    return new ArrayList<>(m.values());
  }
}
