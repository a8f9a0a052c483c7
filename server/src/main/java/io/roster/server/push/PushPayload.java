package io.roster.server.push;

import io.roster.server.model.ServiceDelta;
import io.roster.server.model.ServiceSnapshot;
import java.util.Set;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

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
  private final @Nullable ServiceDelta delta;
  private final String pushId;
  /**
   * Encodings by encoder (one per wire format: Roster's frames, Nacos's JSON payloads), as
   * {encoder, encoded, encoder, encoded, ...}; replaced, never changed, under the payload's lock.
   */
  private volatile Object[] encodings = new Object[0];

  /** The full state {@code snapshot}, a view through no clusters filter. */
  public PushPayload(ServiceSnapshot snapshot) {
    this(snapshot, Set.of(), null);
  }

  /** The full state {@code snapshot}, the view through {@code clusters} (empty = all). */
  public PushPayload(ServiceSnapshot snapshot, Set<String> clusters) {
    this(snapshot, clusters, null);
  }

  private PushPayload(ServiceSnapshot snapshot, Set<String> clusters, @Nullable ServiceDelta delta) {
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
  public @Nullable ServiceDelta delta() {
    return delta;
  }

  public String pushId() {
    return pushId;
  }

  public long revision() {
    return snapshot.revision();
  }

  /**
   * The encoded form {@code encoder} makes, computed on its first use and then shared: one
   * encoding per wire format, keyed by the encoder's identity (so each wire format passes one
   * encoder instance, e.g. a constant).
   */
  public Object encoded(Function<PushPayload, Object> encoder) {
    Object e = find(encodings, encoder);
    if (e == null) {
      synchronized (this) {
        Object[] now = encodings;
        e = find(now, encoder);
        if (e == null) {
          e = encoder.apply(this);
          Object[] next = java.util.Arrays.copyOf(now, now.length + 2);
          next[now.length] = encoder;
          next[now.length + 1] = e;
          encodings = next;
        }
      }
    }
    return e;
  }

  private static @Nullable Object find(Object[] encodings, Function<PushPayload, Object> encoder) {
    for (int i = 0; i < encodings.length; i += 2) {
      if (encodings[i] == encoder) {
        return encodings[i + 1];
      }
    }
    return null;
  }
}
