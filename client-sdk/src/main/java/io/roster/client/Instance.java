package io.roster.client;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * One instance of a service: an address consumers connect to, plus how much traffic it takes.
 * Identity inside a service is ({@link #ip()}, {@link #port()}, {@link #cluster()}).
 *
 * <p>An immutable value: the compact constructor validates every field and copies the metadata,
 * and the {@code withX(..)} methods return changed copies. Invalid values fail fast with a
 * {@link RosterException} of code {@link RosterException.Code#INVALID_ARGUMENT} whose message
 * names the field, the value and what was expected, e.g.
 * {@code weight: 20000.0 (expected: 0..10000)}. Names and sizes the server bounds (service
 * names, metadata size) are checked by the server, whose answer carries the same kind of message.
 *
 * <p>Defaults ({@link #of} and {@link #builder}): weight 1.0, healthy, enabled, ephemeral,
 * cluster {@value #DEFAULT_CLUSTER}, no metadata, empty instance id (the server assigns
 * {@code ip#port#cluster#group@@service}).
 *
 * @param ip address consumers connect to: an IP literal or host name; non-empty, no whitespace
 * @param port TCP port, 1..65535
 * @param weight relative weight for load balancing, 0..10000 (0 takes no traffic)
 * @param healthy whether the instance is healthy; for ephemeral instances the server sets it
 * @param enabled whether the instance takes traffic; disabled instances are never returned
 * @param ephemeral true for instances owned by the client's connection
 * @param cluster cluster inside the service; non-empty, no whitespace
 * @param metadata free-form labels; an unmodifiable, key-sorted copy; no null keys or values
 * @param instanceId the server-assigned id, or empty when unknown; ignored on register
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

  /** The cluster an instance belongs to unless it says otherwise. */
  public static final String DEFAULT_CLUSTER = "DEFAULT";

  /** The largest allowed weight. */
  public static final double MAX_WEIGHT = 10_000;

  /**
   * Validates every field and copies the metadata.
   *
   * @throws RosterException with code INVALID_ARGUMENT when a field is invalid
   */
  public Instance {
    if (ip == null || ip.isEmpty() || hasWhitespace(ip)) {
      throw invalid("ip", quote(ip), "a non-empty IP literal or host name without whitespace");
    }
    if (port < 1 || port > 65_535) {
      throw invalid("port", String.valueOf(port), "1..65535");
    }
    if (!(weight >= 0 && weight <= MAX_WEIGHT)) { // also rejects NaN
      throw invalid("weight", String.valueOf(weight), "0..10000");
    }
    if (cluster == null || cluster.isEmpty() || hasWhitespace(cluster)) {
      throw invalid("cluster", quote(cluster), "a non-empty name without whitespace");
    }
    if (metadata == null) {
      throw invalid("metadata", "null", "a map, possibly empty");
    }
    TreeMap<String, String> copy = new TreeMap<>();
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      if (e.getKey() == null) {
        throw invalid("metadata", "a null key", "non-null keys");
      }
      if (e.getValue() == null) {
        throw invalid("metadata." + e.getKey(), "null", "a non-null value");
      }
      copy.put(e.getKey(), e.getValue());
    }
    metadata = Collections.unmodifiableMap(copy);
    instanceId = instanceId == null ? "" : instanceId;
  }

  /**
   * Returns an instance with every default: weight 1.0, healthy, enabled, ephemeral, cluster
   * {@value #DEFAULT_CLUSTER}, no metadata.
   *
   * @param ip address consumers connect to
   * @param port TCP port, 1..65535
   * @return the instance
   * @throws RosterException with code INVALID_ARGUMENT when ip or port is invalid
   */
  public static Instance of(String ip, int port) {
    return new Instance(ip, port, 1.0, true, true, true, DEFAULT_CLUSTER, Map.of(), "");
  }

  /**
   * Returns a builder preset with the defaults; {@code ip} and {@code port} must be set.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns a builder preset with this instance's values.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    return new Builder()
        .ip(ip)
        .port(port)
        .weight(weight)
        .healthy(healthy)
        .enabled(enabled)
        .ephemeral(ephemeral)
        .cluster(cluster)
        .metadata(metadata)
        .instanceId(instanceId);
  }

  /**
   * Returns a copy with another ip.
   *
   * @param newIp the ip
   * @return the copy
   */
  public Instance withIp(String newIp) {
    return new Instance(newIp, port, weight, healthy, enabled, ephemeral, cluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy with another port.
   *
   * @param newPort the port, 1..65535
   * @return the copy
   */
  public Instance withPort(int newPort) {
    return new Instance(ip, newPort, weight, healthy, enabled, ephemeral, cluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy with another weight.
   *
   * @param newWeight the weight, 0..10000
   * @return the copy
   */
  public Instance withWeight(double newWeight) {
    return new Instance(ip, port, newWeight, healthy, enabled, ephemeral, cluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy with another health flag.
   *
   * @param newHealthy the flag
   * @return the copy
   */
  public Instance withHealthy(boolean newHealthy) {
    return new Instance(ip, port, weight, newHealthy, enabled, ephemeral, cluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy with another enabled flag.
   *
   * @param newEnabled the flag
   * @return the copy
   */
  public Instance withEnabled(boolean newEnabled) {
    return new Instance(ip, port, weight, healthy, newEnabled, ephemeral, cluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy with another ephemeral flag.
   *
   * @param newEphemeral the flag
   * @return the copy
   */
  public Instance withEphemeral(boolean newEphemeral) {
    return new Instance(ip, port, weight, healthy, enabled, newEphemeral, cluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy in another cluster.
   *
   * @param newCluster the cluster name
   * @return the copy
   */
  public Instance withCluster(String newCluster) {
    return new Instance(ip, port, weight, healthy, enabled, ephemeral, newCluster, metadata,
        instanceId);
  }

  /**
   * Returns a copy with other metadata (copied).
   *
   * @param newMetadata the metadata
   * @return the copy
   */
  public Instance withMetadata(Map<String, String> newMetadata) {
    return new Instance(ip, port, weight, healthy, enabled, ephemeral, cluster, newMetadata,
        instanceId);
  }

  /**
   * Returns a copy with another instance id.
   *
   * @param newInstanceId the id, or empty
   * @return the copy
   */
  public Instance withInstanceId(String newInstanceId) {
    return new Instance(ip, port, weight, healthy, enabled, ephemeral, cluster, metadata,
        newInstanceId);
  }

  /**
   * Whether {@code other} has the same identity inside a service: same ip, port and cluster.
   *
   * @param other another instance
   * @return true when ip, port and cluster are equal
   */
  public boolean sameIdentity(Instance other) {
    return other != null
        && port == other.port
        && ip.equals(other.ip)
        && cluster.equals(other.cluster);
  }

  private static boolean hasWhitespace(String s) {
    for (int i = 0; i < s.length(); i++) {
      if (Character.isWhitespace(s.charAt(i))) {
        return true;
      }
    }
    return false;
  }

  private static String quote(String s) {
    return s == null ? "null" : "'" + s + "'";
  }

  private static RosterException invalid(String field, String value, String expected) {
    return new RosterException(
        RosterException.Code.INVALID_ARGUMENT,
        field + ": " + value + " (expected: " + expected + ")",
        field,
        null);
  }

  /**
   * Builds an {@link Instance}. Not thread-safe; validation happens in {@link #build()}.
   */
  public static final class Builder {
    private @Nullable String ip;
    private int port;
    private double weight = 1.0;
    private boolean healthy = true;
    private boolean enabled = true;
    private boolean ephemeral = true;
    private String cluster = DEFAULT_CLUSTER;
    private Map<String, String> metadata = Map.of();
    private String instanceId = "";

    private Builder() {}

    /**
     * Sets the address consumers connect to. Required.
     *
     * @param value an IP literal or host name
     * @return this builder
     */
    public Builder ip(String value) {
      this.ip = value;
      return this;
    }

    /**
     * Sets the TCP port. Required.
     *
     * @param value 1..65535
     * @return this builder
     */
    public Builder port(int value) {
      this.port = value;
      return this;
    }

    /**
     * Sets the weight (default 1.0).
     *
     * @param value 0..10000
     * @return this builder
     */
    public Builder weight(double value) {
      this.weight = value;
      return this;
    }

    /**
     * Sets the health flag (default true).
     *
     * @param value the flag
     * @return this builder
     */
    public Builder healthy(boolean value) {
      this.healthy = value;
      return this;
    }

    /**
     * Sets the enabled flag (default true).
     *
     * @param value the flag
     * @return this builder
     */
    public Builder enabled(boolean value) {
      this.enabled = value;
      return this;
    }

    /**
     * Sets the ephemeral flag (default true).
     *
     * @param value the flag
     * @return this builder
     */
    public Builder ephemeral(boolean value) {
      this.ephemeral = value;
      return this;
    }

    /**
     * Sets the cluster (default {@value Instance#DEFAULT_CLUSTER}).
     *
     * @param value the cluster name
     * @return this builder
     */
    public Builder cluster(String value) {
      this.cluster = value;
      return this;
    }

    /**
     * Sets the metadata (default empty); copied on {@link #build()}.
     *
     * @param value the metadata
     * @return this builder
     */
    public Builder metadata(Map<String, String> value) {
      this.metadata = Objects.requireNonNull(value, "metadata");
      return this;
    }

    /**
     * Sets the instance id (default empty: assigned by the server).
     *
     * @param value the id
     * @return this builder
     */
    public Builder instanceId(String value) {
      this.instanceId = value;
      return this;
    }

    /**
     * Validates and builds the instance.
     *
     * @return the instance
     * @throws RosterException with code INVALID_ARGUMENT when a field is invalid
     */
    @SuppressWarnings("NullAway") // an unset ip goes to the constructor, which refuses it with INVALID_ARGUMENT
    public Instance build() {
      return new Instance(ip, port, weight, healthy, enabled, ephemeral, cluster, metadata,
          instanceId);
    }
  }
}
