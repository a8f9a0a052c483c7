package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Filters and picks instances for consumers. Stateless apart from the random source. */
final class Balancer {

  private Balancer() {}

  /** The instances of the given clusters; all of them when {@code clusters} is null or empty. */
  static List<Instance> inClusters(List<Instance> all, @Nullable List<String> clusters) {
    if (clusters == null || clusters.isEmpty()) {
      return all;
    }
    Set<String> wanted = Set.copyOf(clusters);
    List<Instance> result = new ArrayList<>();
    for (Instance i : all) {
      if (wanted.contains(i.cluster())) {
        result.add(i);
      }
    }
    return result;
  }

  /** Enabled instances with weight &gt; 0 whose healthy flag equals {@code healthy}. */
  static List<Instance> select(List<Instance> all, boolean healthy) {
    return select(all, healthy, false);
  }

  /**
   * Same; when the protect threshold is reached, asking for healthy instances gives every
   * enabled one with weight &gt; 0, unhealthy ones included.
   */
  static List<Instance> select(List<Instance> all, boolean healthy, boolean protectThresholdReached) {
    List<Instance> result = new ArrayList<>();
    for (Instance i : all) {
      if (i.enabled() && i.weight() > 0 && (i.healthy() == healthy || (healthy && protectThresholdReached))) {
        result.add(i);
      }
    }
    return List.copyOf(result);
  }

  /**
   * Picks one healthy, enabled instance with weight &gt; 0 at random in proportion to the
   * weights; empty when there is none.
   */
  static Optional<Instance> pickWeighted(List<Instance> all, Random random) {
    return pickWeighted(all, random, false);
  }

  /** Same; when the protect threshold is reached, unhealthy instances are candidates too. */
  static Optional<Instance> pickWeighted(List<Instance> all, Random random, boolean protectThresholdReached) {
    List<Instance> candidates = select(all, true, protectThresholdReached);
    if (candidates.isEmpty()) {
      return Optional.empty();
    }
    double total = 0;
    for (Instance i : candidates) {
      total += i.weight();
    }
    double point = random.nextDouble() * total;
    double cumulative = 0;
    for (Instance i : candidates) {
      cumulative += i.weight();
      if (point < cumulative) {
        return Optional.of(i);
      }
    }
    return Optional.of(candidates.get(candidates.size() - 1)); // rounding at the very top
  }
}
