package io.roster.server.dns;

import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Change;
import io.roster.server.registry.NamespaceCount;
import io.roster.server.registry.Registry;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The registry's service keys by their names in lower case, so that DNS names match whatever
 * their case (RFC 4343): {@code ORDERS.roster.} finds service {@code orders}. Owns an index of
 * every key the registry has reported since the index was built, kept by a change listener; the
 * key of a service that is gone stays until the index is rebuilt from the registry (once it holds
 * more than twice the services plus 1,024), and is skipped at lookup. Names that differ only in
 * case: the first in the keys' order.
 *
 * <p>Thread-safe: the listener runs on the changing thread, lookups on the DNS threads; a rebuild
 * runs on the looking-up thread, one at a time, while changes go on.
 */
final class FoldedNames implements Registry.ChangeListener {

  /** Between the fields of an index entry: no name may contain it. */
  private static final char SEP = '\u0000';

  private final Registry registry;
  private final Object rebuilding = new Object();
  private volatile Index index = new Index();
  /** The index a rebuild is filling, which changes also go to meanwhile; null between rebuilds. */
  private volatile @Nullable Index next;

  private FoldedNames(Registry registry) {
    this.registry = registry;
  }

  /** An index of {@code registry}'s services, kept current from now on. */
  static FoldedNames watching(Registry registry) {
    FoldedNames names = new FoldedNames(registry);
    registry.addListener(names);
    names.rebuild();
    return names;
  }

  @Override
  public void onChange(Change change) {
    index.add(change.service());
    Index n = next;
    if (n != null) {
      n.add(change.service());
    }
  }

  /** The service whose namespace, group and name are these but for case, or null. */
  @Nullable ServiceKey find(String namespace, String group, String service) {
    if (hasSep(namespace) || hasSep(group) || hasSep(service)) {
      return null; // DNS labels may hold any byte; no name holds this one
    }
    return firstLive(fold(namespace) + SEP + fold(group) + SEP + fold(service) + SEP);
  }

  /** Whether a namespace (and group, when non-empty) of these names but for case holds a service. */
  boolean holdsServices(String namespace, String group) {
    if (hasSep(namespace) || hasSep(group)) {
      return false;
    }
    return firstLive(fold(namespace) + SEP + (group.isEmpty() ? "" : fold(group) + SEP)) != null;
  }

  private @Nullable ServiceKey firstLive(String prefix) {
    Index i = index;
    if (i.size.get() > 2L * registry.serviceCount() + 1024) {
      rebuild();
      i = index;
    }
    for (ServiceKey k : i.keys.subMap(prefix, prefix + '\uffff').values()) {
      if (registry.stats(k) != null) {
        return k;
      }
    }
    return null;
  }

  private static boolean hasSep(String name) {
    return name.indexOf(SEP) >= 0;
  }

  private void rebuild() {
    synchronized (rebuilding) {
      Index fresh = new Index();
      next = fresh;
      for (NamespaceCount ns : registry.namespaceBook().withServices()) {
        for (ServiceKey k : registry.listServices(ns.namespace(), "", 1, Integer.MAX_VALUE).services()) {
          fresh.add(k);
        }
      }
      index = fresh;
      next = null;
    }
  }

  private static String fold(String name) {
    return name.toLowerCase(Locale.ROOT);
  }

  /**
   * Keys sorted by their folded names, then by the names themselves. A key already held is
   * found by its hash, so a change of a known service (nearly every change) folds no name.
   */
  private static final class Index {
    final ConcurrentSkipListMap<String, ServiceKey> keys = new ConcurrentSkipListMap<>();
    final Set<ServiceKey> held = ConcurrentHashMap.newKeySet();
    final AtomicInteger size = new AtomicInteger();

    void add(ServiceKey k) {
      if (!held.add(k)) {
        return;
      }
      String entry = fold(k.namespace()) + SEP + fold(k.group()) + SEP + fold(k.name()) + SEP
          + k.namespace() + SEP + k.group() + SEP + k.name();
      if (keys.putIfAbsent(entry, k) == null) {
        size.incrementAndGet();
      }
    }
  }
}
