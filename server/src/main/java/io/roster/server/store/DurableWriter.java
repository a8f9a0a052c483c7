package io.roster.server.store;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.Owner;
import io.roster.server.registry.Claim;
import io.roster.server.registry.Command;
import io.roster.server.registry.HoldListener;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.registry.Writer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A standalone server's {@link Writer} (docs/persistence.md): every change is applied to the
 * registry at once, as {@link Writer#direct} does; a change of durable state (a service's
 * settings, an operator's hold, a persistent instance) is also written to the {@link StateStore} and forced to the disk
 * before the caller hears of it. Ephemeral registrations never touch the disk: their owners
 * register them again after a restart.
 *
 * <p>A durable change that cannot be written is undone and refused with UNAVAILABLE, so that
 * nothing is acknowledged that a restart would lose. Holds that end because their instance left
 * the registry are gathered (at most one entry per held instance) and written with the next
 * durable change or {@link #flush}, without making the departure wait for the disk.
 */
public final class DurableWriter implements Writer, HoldListener, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(DurableWriter.class);

  private final Registry registry;
  private final StateStore store;
  private final Writer direct;
  private final Set<StateStore.InstanceRef> ended = ConcurrentHashMap.newKeySet();

  public DurableWriter(Registry registry, StateStore store) {
    this.registry = registry;
    this.store = store;
    this.direct = Writer.direct(registry);
  }

  /**
   * Puts the stored state into a registry that serves nothing yet: settings now, holds as
   * restored holds that wait for their instances (see {@link Registry#restoreHolds}).
   */
  public static void load(Registry registry, StateStore.State state) {
    state.settings().forEach((service, settings) -> registry.updateSettings(service, s -> settings));
    state.namespaces().forEach(n -> registry.namespaceBook().put(n, true));
    Map<ServiceKey, Set<InstanceKey>> holds = new java.util.HashMap<>();
    for (StateStore.InstanceRef h : state.holds()) {
      holds.computeIfAbsent(h.service(), k -> new java.util.HashSet<>()).add(h.key());
    }
    registry.restoreHolds(holds);
    // After the holds: a held persistent instance takes its hold as it is registered.
    state.persistent().forEach((ref, stored) -> putBack(registry, ref.service(), stored));
  }

  @Override
  @SuppressWarnings("unchecked") // R is the command's own result type, which its change returns
  public <R> CompletableFuture<R> submit(Command<R> command) {
    if (command instanceof Command.PutNamespace p) {
      return (CompletableFuture<R>) durably(() -> putNamespace(p));
    }
    if (command instanceof Command.DeleteNamespace d) {
      return (CompletableFuture<R>) durably(() -> deleteNamespace(d));
    }
    if (command instanceof Command.UpdateSettings u) {
      return (CompletableFuture<R>) durably(() -> settings(u));
    }
    if (command instanceof Command.UpdateInstance u && (u.enabled() != null || persistent(u.service(), u.key()))) {
      return (CompletableFuture<R>) durably(() -> instance(u));
    }
    if (command instanceof Command.Register r && r.owner().kind() == Owner.Kind.PERSISTENT) {
      return (CompletableFuture<R>) durably(() -> register(r));
    }
    if (command instanceof Command.Deregister d && d.owner().kind() == Owner.Kind.PERSISTENT) {
      return (CompletableFuture<R>) durably(() -> deregister(d));
    }
    return direct.submit(command);
  }

  /** Registers a persistent instance as it was stored, with the identity that registered it. */
  private static void putBack(Registry registry, ServiceKey service, StateStore.Stored stored) {
    registry.register(Owner.PERSISTENT, new Claim("", 0, stored.identity(), true), service, stored.instance());
  }

  private boolean persistent(ServiceKey service, InstanceKey key) {
    Owner owner = registry.ownerOf(service, key);
    return owner != null && owner.kind() == Owner.Kind.PERSISTENT;
  }

  /** The persistent instance {@code key} as stored now, with who registered it; null when there is none. */
  private StateStore.@Nullable Stored stored(ServiceKey service, InstanceKey key) {
    Instance i = registry.instance(service, key);
    Claim claim = registry.claimOf(service, key);
    return i == null || !persistent(service, key) ? null
        : new StateStore.Stored(i, claim == null ? "" : claim.identity());
  }

  private Instance register(Command.Register r) throws IOException {
    InstanceKey key = r.instance().key();
    StateStore.Stored before = stored(r.service(), key);
    Instance after = r.applyTo(registry);
    try {
      store.persistent(r.service(), key, stored(r.service(), key));
    } catch (IOException e) {
      if (before == null) {
        registry.deregister(Owner.PERSISTENT, r.service(), key);
      } else {
        putBack(registry, r.service(), before);
      }
      throw e;
    }
    return after;
  }

  private Boolean deregister(Command.Deregister d) throws IOException {
    StateStore.Stored before = stored(d.service(), d.key());
    boolean removed = d.applyTo(registry);
    if (removed) {
      try {
        store.persistent(d.service(), d.key(), null);
      } catch (IOException e) {
        if (before != null) {
          putBack(registry, d.service(), before);
        }
        throw e;
      }
    }
    return removed;
  }

  private Namespace putNamespace(Command.PutNamespace p) throws IOException {
    Namespace before = registry.namespaceBook().get(p.namespace().id());
    Namespace after = p.applyTo(registry);
    try {
      store.namespace(after.id(), after);
    } catch (IOException e) {
      if (before == null) {
        registry.namespaceBook().forget(after.id());
      } else {
        registry.namespaceBook().put(before, false);
      }
      throw e;
    }
    return after;
  }

  private Namespace deleteNamespace(Command.DeleteNamespace d) throws IOException {
    Namespace before = d.applyTo(registry);
    try {
      store.namespace(d.id(), null);
    } catch (IOException e) {
      registry.namespaceBook().restoreOne(before);
      throw e;
    }
    return before;
  }

  /** A change of durable state, applied and written in one order. */
  @FunctionalInterface
  private interface Change {
    @Nullable Object run() throws IOException;
  }

  private synchronized CompletableFuture<@Nullable Object> durably(Change change) {
    try {
      flushEnded();
      return CompletableFuture.completedFuture(change.run());
    } catch (IOException e) {
      log.error("Could not write durable state to {}: the change was undone and refused", store, e);
      return CompletableFuture.failedFuture(new RegistryException(RegistryException.Kind.UNAVAILABLE, "data-dir",
          "the change could not be written to the data directory (" + e.getMessage() + "); nothing was changed"));
    }
  }

  private ServiceSettings settings(Command.UpdateSettings u) throws IOException {
    ServiceSettings before = registry.settings(u.service());
    ServiceSettings after = u.applyTo(registry);
    if (!after.equals(before)) {
      try {
        store.settings(u.service(), after);
      } catch (IOException e) {
        registry.updateSettings(u.service(), s -> before);
        throw e;
      }
    }
    return after;
  }

  private @Nullable Instance instance(Command.UpdateInstance u) throws IOException {
    Instance before = registry.instance(u.service(), u.key());
    boolean heldBefore = registry.held(u.service(), u.key());
    Instance after = u.applyTo(registry);
    boolean heldAfter = registry.held(u.service(), u.key());
    if (after != null && before != null) {
      try {
        if (heldAfter != heldBefore) {
          store.hold(u.service(), u.key(), heldAfter);
        }
        if (persistent(u.service(), u.key()) && !after.equals(before)) {
          store.persistent(u.service(), u.key(), stored(u.service(), u.key()));
        }
      } catch (IOException e) {
        registry.update(u.service(), u.key(), i -> before, heldBefore);
        throw e;
      }
    }
    return after;
  }

  @Override
  public void holdEnded(ServiceKey service, InstanceKey key) {
    ended.add(new StateStore.InstanceRef(service, key));
  }

  /** Writes the holds that ended since the last write (a timer calls it, and {@link #close}). */
  public synchronized void flush() {
    try {
      flushEnded();
    } catch (IOException e) {
      log.warn("Could not write {} ended holds to {}; trying again later", ended.size(), store, e);
    }
  }

  /** Holds restored at start whose instances never came back (the warm-up is over): they end. */
  public synchronized void endRestored() {
    registry.endRestoredHolds().forEach((service, keys) -> keys.forEach(k -> holdEnded(service, k)));
    flush();
  }

  private void flushEnded() throws IOException {
    if (ended.isEmpty()) {
      return;
    }
    List<StateStore.InstanceRef> keys = new ArrayList<>(ended);
    ended.removeAll(keys);
    // A hold set again since it ended (the instance came back and an operator held it) stays.
    keys.removeIf(k -> registry.held(k.service(), k.key()));
    try {
      store.hold(keys, false);
    } catch (IOException e) {
      ended.addAll(keys);
      throw e;
    }
  }

  /** Closes the store; later durable changes fail. */
  @Override
  public synchronized void close() throws IOException {
    store.close();
  }

  @Override
  public String toString() {
    return "durable writer";
  }
}
