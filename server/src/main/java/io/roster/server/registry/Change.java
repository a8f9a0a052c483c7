package io.roster.server.registry;

import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One visible change to one service, as the registry reports it to its {@link
 * Registry.ChangeListener}s: which service, whose registrations, what happened and the revision
 * the service has from this change on. Immutable.
 *
 * @param service the service that changed
 * @param owner whose registrations changed: the registering or removed owner, the owner of an
 *     updated instance; null for a change of the service's settings (the operator's, nobody's)
 *     and for a restore
 * @param kind what happened
 * @param revision the service's revision after the change (see {@link Registry#snapshot})
 */
public record Change(ServiceKey service, @Nullable Owner owner, Kind kind, long revision) {

  /** What happened to the service. */
  public enum Kind {
    /** {@code owner} registered or replaced instances (a batch may also drop some of its own). */
    REGISTERED,
    /** {@code owner}'s instances were removed: a deregister, a drain, or the end of the owner. */
    REMOVED,
    /** An instance was changed in place, keeping its owner (an operator's update). */
    UPDATED,
    /** The service's settings changed what consumers see (the protect threshold). */
    SETTINGS,
    /** The whole registry was replaced by an image (a cluster member loaded a snapshot). */
    RESTORED
  }

  public Change {
    Objects.requireNonNull(service, "service");
    Objects.requireNonNull(kind, "kind");
    if (owner == null && kind != Kind.SETTINGS && kind != Kind.RESTORED) {
      throw new IllegalArgumentException("owner: null (expected: an owner for a " + kind + " change)");
    }
  }
}
