package io.roster.client.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.roster.client.Instance;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class BalancerTest {

  private final Instance light = Instance.of("10.0.0.1", 80).withWeight(1);
  private final Instance heavy = Instance.of("10.0.0.2", 80).withWeight(3);
  private final Instance zero = Instance.of("10.0.0.3", 80).withWeight(0);
  private final Instance sick = Instance.of("10.0.0.4", 80).withHealthy(false);
  private final Instance disabled = Instance.of("10.0.0.5", 80).withEnabled(false);

  @Test
  void weightedChoiceFollowsTheWeights() {
    Random random = new Random(7);
    List<Instance> all = List.of(light, heavy, zero, sick, disabled);
    Map<Instance, Integer> counts = new HashMap<>();
    int draws = 40_000;
    for (int i = 0; i < draws; i++) {
      counts.merge(Balancer.pickWeighted(all, random).orElseThrow(), 1, Integer::sum);
    }
    assertThat(counts).containsOnlyKeys(light, heavy);
    double heavyShare = counts.get(heavy) / (double) draws;
    assertThat(heavyShare).isBetween(0.73, 0.77); // expected 0.75
  }

  @Test
  void sameSeedSameChoices() {
    List<Instance> all = List.of(light, heavy);
    Random r1 = new Random(99);
    Random r2 = new Random(99);
    for (int i = 0; i < 100; i++) {
      assertThat(Balancer.pickWeighted(all, r1)).isEqualTo(Balancer.pickWeighted(all, r2));
    }
  }

  @Test
  void nothingToPickWhenNoHealthyEnabledPositiveWeight() {
    assertThat(Balancer.pickWeighted(List.of(zero, sick, disabled), new Random(1))).isEmpty();
    assertThat(Balancer.pickWeighted(List.of(), new Random(1))).isEmpty();
  }

  @Test
  void selectFiltersByHealthEnabledAndWeight() {
    List<Instance> all = List.of(light, heavy, zero, sick, disabled);
    assertThat(Balancer.select(all, true)).containsExactly(light, heavy);
    assertThat(Balancer.select(all, false)).containsExactly(sick);
  }
}
