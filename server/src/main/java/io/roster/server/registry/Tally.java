package io.roster.server.registry;

import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * How many instances an owner has in the registry, added up a chain of wider scopes (an
 * owner's tally can feed its connection's, which feeds its remote address's). The registry
 * keeps every owner's tally exact as instances are added, removed or move to another owner,
 * so checking a limit costs one read, whatever the owner has.
 *
 * <p>Thread-safe. A tally that reaches zero stays usable.
 */
public final class Tally {

  private final AtomicInteger count = new AtomicInteger();
  private final @Nullable Tally parent;

  /** A tally that also adds into {@code parent} (null for none). */
  public Tally(@Nullable Tally parent) {
    this.parent = parent;
  }

  /** A tally of its own. */
  public static Tally standalone() {
    return new Tally(null);
  }

  /** The current count. */
  public int count() {
    return count.get();
  }

  /** Whether it adds into no wider tally (an owner no session of this node holds). */
  boolean isStandalone() {
    return parent == null;
  }

  void add(int delta) {
    for (Tally t = this; t != null; t = t.parent) {
      t.count.addAndGet(delta);
    }
  }
}
