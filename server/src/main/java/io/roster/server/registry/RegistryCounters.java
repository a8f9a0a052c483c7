package io.roster.server.registry;

import io.roster.server.model.Owner;
import java.util.concurrent.atomic.LongAdder;

/**
 * How many instances the registry has taken in and let go, by the kind of their owner, for the
 * server's metrics. A removal is counted as asked for (a deregistration, a drain, a batch that
 * left an instance out) or as its owner's end (a closed connection, an expired lease, a member
 * gone). Loading a snapshot counts nothing. An instance moving from one owner to another (a
 * client's redo on a new connection) counts as a removal and a registration.
 *
 * <p>On a cluster member these are the changes applied to its copy of the registry, which is
 * every member's changes, not only those of its own clients.
 *
 * <p>Thread-safe.
 */
public final class RegistryCounters {

  private final LongAdder[] registered = adders();
  private final LongAdder[] removed = adders();
  private final LongAdder[] ended = adders();

  /** Instances registered, by owners of {@code kind}. */
  public long registered(Owner.Kind kind) {
    return registered[index(kind)].sum();
  }

  /** Instances of owners of {@code kind} removed as asked (deregister, drain, replaced batch). */
  public long removed(Owner.Kind kind) {
    return removed[index(kind)].sum();
  }

  /** Instances of owners of {@code kind} removed because their owner ended. */
  public long ended(Owner.Kind kind) {
    return ended[index(kind)].sum();
  }

  void counted(Owner.Kind kind, int delta, Cause cause) {
    switch (cause) {
      case RESTORE -> { }
      case OWNER_END -> (delta > 0 ? registered : ended)[index(kind)].add(Math.abs(delta));
      case REQUEST -> (delta > 0 ? registered : removed)[index(kind)].add(Math.abs(delta));
    }
  }

  @SuppressWarnings("EnumOrdinal") // an index into these arrays, never stored or sent
  private static int index(Owner.Kind kind) {
    return kind.ordinal();
  }

  private static LongAdder[] adders() {
    LongAdder[] a = new LongAdder[Owner.Kind.values().length];
    for (int i = 0; i < a.length; i++) {
      a[i] = new LongAdder();
    }
    return a;
  }
}
