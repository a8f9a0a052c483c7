package io.roster.server.session;

import io.roster.server.model.RegistryException;
import io.roster.server.registry.Tally;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * What one client connection, or one remote address, holds at once: sessions, Watch calls,
 * subscriptions and (through a {@link Tally} the registry keeps exact) instances. A
 * connection's scope adds into its address's scope, so checking both levels costs one read
 * each, whatever the client already holds.
 *
 * <p>Thread-safe. Counts can pass a limit by the few requests that race each other on
 * different event loops; they never drift, because every slot taken is given back once.
 */
public final class Scope {

  /** What a scope counts, each with its limit per connection and per address. */
  @SuppressWarnings("ImmutableEnumChecker") // the limits are SessionLimits' accessors and constants: no state
  public enum Counted {
    SESSIONS("session", "sessions (Connect streams)", "sessions",
        SessionLimits::sessionsPerConnection, SessionLimits::sessionsPerAddress),
    SUBSCRIPTIONS("subscribe", "subscriptions", "subscriptions",
        SessionLimits::subscriptionsPerConnection, l -> Integer.MAX_VALUE),
    WATCHES("watch", "Watch calls", "watches",
        SessionLimits::watchesPerConnection, l -> Integer.MAX_VALUE);

    final String field;
    final String what;
    final String flag;
    final ToIntFunction<SessionLimits> perConnection;
    final ToIntFunction<SessionLimits> perAddress;

    Counted(String field, String what, String flag, ToIntFunction<SessionLimits> perConnection,
        ToIntFunction<SessionLimits> perAddress) {
      this.field = field;
      this.what = what;
      this.flag = flag;
      this.perConnection = perConnection;
      this.perAddress = perAddress;
    }
  }

  private final String address;
  private final @Nullable Scope parent;
  private final Tally instances;
  private final AtomicInteger[] counts = new AtomicInteger[Counted.values().length];
  /** Open connections sharing an address scope (the manager forgets it at zero). */
  final AtomicInteger connections = new AtomicInteger();

  /** An address scope (parent null) or a connection scope within {@code parent}. */
  Scope(String address, @Nullable Scope parent) {
    this.address = address;
    this.parent = parent;
    this.instances = new Tally(parent == null ? null : parent.instances);
    for (int i = 0; i < counts.length; i++) {
      counts[i] = new AtomicInteger();
    }
  }

  /** The remote address (host, without port) this scope belongs to. */
  public String address() {
    return address;
  }

  /** Instances owned under this scope. */
  public int instanceCount() {
    return instances.count();
  }

  /** The tally a session of this scope counts its instances in. */
  Tally instances() {
    return instances;
  }

  /**
   * Takes one slot of {@code what} here and in the address scope, or refuses with
   * RESOURCE_EXHAUSTED naming the scope, the count, the limit and its flag (nothing taken).
   */
  public void acquire(Counted what, SessionLimits limits) {
    for (Scope s = this; s != null; s = s.parent) {
      int limit = s.limit(what, limits);
      int now = s.count(what).incrementAndGet();
      if (now > limit) {
        for (Scope u = this; u != null && u != s.parent; u = u.parent) {
          u.count(what).decrementAndGet();
        }
        String flag = "max-" + what.flag + "-per-" + s.flagScope();
        throw RegistryException.limit(what.field, flag, s.describe() + " already " + s.verb("has", "have") + " "
            + (now - 1) + " " + what.what + " (limit: " + limit + ", see --" + flag + ")");
      }
    }
  }

  /** Gives back {@code n} slots of {@code what}, here and in the address scope. */
  public void release(Counted what, int n) {
    for (Scope s = this; s != null; s = s.parent) {
      s.count(what).addAndGet(-n);
    }
  }

  /**
   * Refuses when {@code adding} more instances would pass the connection's or the address's
   * instance limit: two reads, nothing taken (the registry counts what is stored).
   */
  void checkInstances(SessionLimits limits, long adding, String field) {
    for (Scope s = this; s != null; s = s.parent) {
      int limit = s.parent == null ? limits.instancesPerAddress() : limits.instancesPerConnection();
      int now = s.instances.count();
      if (now + adding > limit) {
        String flag = "max-instances-per-" + s.flagScope();
        throw RegistryException.limit(field, flag, s.describe() + " would own " + (now + adding) + " instances (limit: "
            + limit + ", see --" + flag + "); " + s.verb("it owns ", "they own ") + now);
      }
    }
  }

  @SuppressWarnings("EnumOrdinal") // an index into this scope's own counters, never stored or sent
  private AtomicInteger count(Counted what) {
    return counts[what.ordinal()];
  }

  private int limit(Counted what, SessionLimits limits) {
    return (parent == null ? what.perAddress : what.perConnection).applyAsInt(limits);
  }

  private String describe() {
    return parent == null ? "the connections from " + address : "this connection";
  }

  /** "has"/"owns" for one connection, "have"/"own" for the connections of an address. */
  private String verb(String one, String many) {
    return parent == null ? many : one;
  }

  private String flagScope() {
    return parent == null ? "address" : "connection";
  }
}
