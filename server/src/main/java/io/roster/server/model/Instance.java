package io.roster.server.model;

import java.util.Map;
import java.util.TreeMap;

/**
 * One registered instance. Immutable and always valid: the compact constructor checks every
 * field against the limits in {@link Names} and names the field in its error.
 *
 * @param instanceId {@code ip#port#cluster#group@@service}, assigned by the registry
 */
public record Instance(
    String ip,
    int port,
    double weight,
    boolean healthy,
    boolean enabled,
    boolean ephemeral,
    String cluster,
    Map<String, String> metadata,
    String instanceId) {

  public Instance {
    Names.checkIp("instance.ip", ip);
    if (port < 1 || port > 65535) {
      throw RegistryException.invalid("instance.port", port, "1..65535");
    }
    if (!(weight >= 0 && weight <= Names.MAX_WEIGHT)) {
      throw RegistryException.invalid("instance.weight", weight, "0..10000");
    }
    cluster = cluster == null || cluster.isEmpty() ? Names.DEFAULT_CLUSTER : cluster;
    Names.checkCluster("instance.cluster", cluster);
    metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    Names.checkMetadata("instance.metadata", metadata);
    instanceId = instanceId == null ? "" : instanceId;
  }

  /**
   * The order of instances in a state: by ip, port and cluster, as {@link InstanceKey} orders
   * them, without allocating keys (a state of 10,000 instances is sorted once per revision).
   */
  public static final java.util.Comparator<Instance> ORDER = (a, b) -> {
    int c = a.ip.compareTo(b.ip);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(a.port, b.port);
    return c != 0 ? c : a.cluster.compareTo(b.cluster);
  };

  public InstanceKey key() {
    return new InstanceKey(ip, port, cluster);
  }

  /** This instance with another weight. */
  public Instance withWeight(double w) {
    return new Instance(ip, port, w, healthy, enabled, ephemeral, cluster, metadata, instanceId);
  }

  /** This instance with other metadata. */
  public Instance withMetadata(Map<String, String> m) {
    return new Instance(ip, port, weight, healthy, enabled, ephemeral, cluster, m, instanceId);
  }

  /** This instance marked healthy or not. */
  public Instance withHealthy(boolean h) {
    return h == healthy ? this : new Instance(ip, port, weight, h, enabled, ephemeral, cluster, metadata, instanceId);
  }

  /** This instance in or out of traffic. */
  public Instance withEnabled(boolean on) {
    return on == enabled ? this : new Instance(ip, port, weight, healthy, on, ephemeral, cluster, metadata, instanceId);
  }

  /** This instance as stored under {@code service}: id assigned. */
  public Instance withId(ServiceKey service) {
    String id = ip + "#" + port + "#" + cluster + "#" + service.groupedName();
    return id.equals(instanceId) ? this
        : new Instance(ip, port, weight, healthy, enabled, ephemeral, cluster, metadata, id);
  }

  /** Metadata sorted by key: the canonical order used for checksums and the wire. */
  public Map<String, String> sortedMetadata() {
    return metadata.isEmpty() ? metadata : new TreeMap<>(metadata);
  }
}
