package io.roster.server.push;

import io.roster.server.model.ServiceDelta;
import io.roster.server.model.ServiceSnapshot;
import java.util.Set;
import java.util.function.Function;

/**
 * One state of one service, as subscribers with one clusters filter see it, plus its wire
 * encoding, built at most once however many sessions receive it. The state travels either in
 * full or, for sessions that take deltas, as a {@link ServiceDelta} against a state the
 * session acked ({@link DeltaPushes}); both forms of one state share the push id.
 *
 * <p>The push id is the revision in hex: revisions are unique across the registry, so a
 * session can match an ack to the services it sent that revision for.
 */
public final class PushPayload {

  private final ServiceSnapshot snapshot;
  private final Set<String> clusters;
  private final ServiceDelta delta;
  private final String pushId;
  private volatile Object encoded;

  /** The full state {@code snapshot}, a view through no clusters filter. */
  public PushPayload(ServiceSnapshot snapshot) {
    this(snapshot, Set.of(), null);
  }

  /** The full state {@code snapshot}, the view through {@code clusters} (empty = all). */
  public PushPayload(ServiceSnapshot snapshot, Set<String> clusters) {
    this(snapshot, clusters, null);
  }

  private PushPayload(ServiceSnapshot snapshot, Set<String> clusters, ServiceDelta delta) {
    this.snapshot = snapshot;
    this.clusters = clusters;
    this.delta = delta;
    this.pushId = Long.toHexString(snapshot.revision());
  }

  /** The state {@code delta.target()} sent as {@code delta}; same push id as the full state. */
  static PushPayload ofDelta(ServiceDelta delta, Set<String> clusters) {
    return new PushPayload(delta.target(), clusters, delta);
  }

  /** The state (for a delta, the state it leads to). */
  public ServiceSnapshot snapshot() {
    return snapshot;
  }

  /** The clusters filter of the view; empty means all. */
  public Set<String> clusters() {
    return clusters;
  }

  /** The change this payload carries instead of the full state, or null for a full state. */
  public ServiceDelta delta() {
    return delta;
  }

  public String pushId() {
    return pushId;
  }

  public long revision() {
    return snapshot.revision();
  }

  /**
   * The encoded form, computed by {@code encoder} on first use and then shared. Every caller
   * of one payload must pass the same encoder.
   */
  public Object encoded(Function<PushPayload, Object> encoder) {
    Object e = encoded;
    if (e == null) {
      synchronized (this) {
        e = encoded;
        if (e == null) {
          e = encoder.apply(this);
          encoded = e;
        }
      }
    }
    return e;
  }
}
