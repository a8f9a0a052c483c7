package io.roster.server.model;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The consumer-visible state of a service at one revision: enabled instances sorted by
 * (ip, port, cluster), and a checksum of exactly that content.
 *
 * <p>While the node warms up, a state also lists what it saw <em>depart</em>: identities that left
 * the state through a departure this process observed (a deregistration, the end of the owner's
 * connection or lease), and those of registered instances that are disabled. A client applies
 * those removals at once and holds only the instances the state lacks that the node never had
 * (docs/decisions.md, record 20). The list is not part of the content: the checksum ignores it.
 *
 * @param revision hybrid-clock revision of the change that produced this state
 * @param checksum hex SHA-256 prefix of the canonical content; independent of the revision
 * @param departed identities this node saw leave that the state does not show, sorted; empty
 *     once the node is warm
 */
public record ServiceSnapshot(
    ServiceKey service,
    List<Instance> instances,
    long revision,
    String checksum,
    boolean protectThresholdReached,
    List<InstanceKey> departed) {

  /**
   * The most departures a state lists: it lists them beside its instances (bounded by the
   * service limits), and every client's message limit must still hold both. A departure beyond
   * it is not listed, so clients hold it as an unseen lack, as they do with a server that lists
   * none.
   */
  public static final int MAX_DEPARTED = 1000;

  public ServiceSnapshot {
    instances = List.copyOf(instances);
    departed = List.copyOf(departed);
  }

  /** A state that lists no departures (a warm node's). */
  public ServiceSnapshot(ServiceKey service, List<Instance> instances, long revision, String checksum,
      boolean protectThresholdReached) {
    this(service, instances, revision, checksum, protectThresholdReached, List.of());
  }

  /**
   * Builds the visible state from every registered instance: drops disabled ones, sorts, and
   * computes the checksum.
   */
  public static ServiceSnapshot of(ServiceKey service, Collection<Instance> registered, long revision) {
    return of(service, registered, revision, 0);
  }

  /**
   * Same, with the service's protect threshold (0 = off): when healthy / total of the enabled
   * instances is at or below it (and there is at least one), the state is marked
   * {@code protectThresholdReached} and a healthy-only view keeps the unhealthy instances, so
   * that load spreads over all of them instead of crushing the few healthy ones.
   */
  public static ServiceSnapshot of(ServiceKey service, Collection<Instance> registered, long revision,
      double protectThreshold) {
    return of(service, registered, revision, protectThreshold, null);
  }

  /**
   * Same, listing departures: {@code departed} (identities that left through a departure this
   * node saw; none of them registered now) and the identities of the disabled instances among
   * {@code registered}. Null for a node that lists none (a warm one).
   */
  public static ServiceSnapshot of(ServiceKey service, Collection<Instance> registered, long revision,
      double protectThreshold, @Nullable Collection<InstanceKey> departed) {
    List<Instance> visible = new ArrayList<>(registered.size());
    List<InstanceKey> gone = departed == null || departed.isEmpty() ? new ArrayList<>(0) : new ArrayList<>(departed);
    int healthy = 0;
    for (Instance i : registered) {
      if (i.enabled()) {
        visible.add(i);
        healthy += i.healthy() ? 1 : 0;
      } else if (departed != null && gone.size() < MAX_DEPARTED) {
        gone.add(i.key());
      }
    }
    visible.sort(Instance.ORDER);
    gone.sort(null);
    boolean reached = protectThreshold > 0 && !visible.isEmpty()
        && (double) healthy / visible.size() <= protectThreshold;
    return new ServiceSnapshot(service, visible, revision, checksum(service, visible, reached), reached, gone);
  }

  /**
   * The view a caller asked for: only these clusters (empty = all) and, optionally, only
   * healthy instances. Returns {@code this} when nothing is filtered out.
   */
  public ServiceSnapshot view(Set<String> clusters, boolean healthyOnly) {
    healthyOnly = healthyOnly && !protectThresholdReached; // reached: every instance is served
    if (clusters.isEmpty() && !healthyOnly) {
      return this;
    }
    List<Instance> kept = new ArrayList<>(instances.size());
    for (Instance i : instances) {
      if ((clusters.isEmpty() || clusters.contains(i.cluster())) && (!healthyOnly || i.healthy())) {
        kept.add(i);
      }
    }
    List<InstanceKey> gone = departed;
    if (!clusters.isEmpty() && !departed.isEmpty()) {
      gone = new ArrayList<>(departed.size());
      for (InstanceKey k : departed) {
        if (clusters.contains(k.cluster())) {
          gone.add(k);
        }
      }
    }
    if (kept.size() == instances.size() && gone.size() == departed.size()) {
      return this;
    }
    return new ServiceSnapshot(service, kept, revision, checksum(service, kept, protectThresholdReached),
        protectThresholdReached, gone);
  }

  static String checksum(ServiceKey service, List<Instance> sorted, boolean protectThresholdReached) {
    StringBuilder sb = new StringBuilder(64 + sorted.size() * 64);
    sb.append(service).append(protectThresholdReached ? "|protected" : "").append('\n');
    for (Instance i : sorted) {
      sb.append(i.ip()).append('|').append(i.port()).append('|').append(i.cluster()).append('|')
          .append(i.weight()).append('|').append(i.healthy()).append('|').append(i.enabled())
          .append('|').append(i.ephemeral());
      for (Map.Entry<String, String> e : i.sortedMetadata().entrySet()) {
        sb.append('|').append(e.getKey().length()).append(':').append(e.getKey())
            .append('=').append(e.getValue().length()).append(':').append(e.getValue());
      }
      sb.append('\n');
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is required of every JVM", e);
    }
  }
}
