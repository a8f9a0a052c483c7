package io.roster.server.push;

import io.roster.server.model.ServiceSnapshot;
import java.util.function.Function;

/**
 * One state of one service, as subscribers with one clusters filter see it, plus its wire
 * encoding, built at most once however many sessions receive it.
 *
 * <p>The push id is the revision in hex: revisions are unique across the registry, so a
 * session can match an ack to the services it sent that revision for.
 */
public final class PushPayload {

  private final ServiceSnapshot snapshot;
  private final String pushId;
  private volatile Object encoded;

  public PushPayload(ServiceSnapshot snapshot) {
    this.snapshot = snapshot;
    this.pushId = Long.toHexString(snapshot.revision());
  }

  public ServiceSnapshot snapshot() {
    return snapshot;
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
