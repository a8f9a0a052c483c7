package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Owner;
import io.roster.server.model.ServiceKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * The registry's read queries that are not a service's state (see {@link Registry} for what each
 * answers): who owns what, one registration's fields, a service's counters, pages of services
 * and the namespaces' counts. Owns nothing: it reads {@link Services}, each service under its
 * lock.
 */
final class Queries {

  private final Services core;

  Queries(Services core) {
    this.core = core;
  }

  List<Owner> owners(Predicate<Owner> which) {
    List<Owner> found = new ArrayList<>();
    for (Owner o : core.owners.keySet()) {
      if (which.test(o)) {
        found.add(o);
      }
    }
    found.sort(Comparator.comparing(Owner::toString));
    return found;
  }

  int ownedCount(Owner owner) {
    Services.Holdings h = core.owners.get(owner);
    return h == null ? 0 : h.tally.count();
  }

  int ownedCount(Owner owner, ServiceKey service) {
    ServiceEntry e = core.entries.get(service);
    if (e == null) {
      return 0;
    }
    synchronized (e) {
      int[] n = e.byOwner.get(owner);
      return n == null ? 0 : n[0];
    }
  }

  boolean owns(Owner owner, ServiceKey service, InstanceKey key) {
    Registration r = core.registration(service, key);
    return r != null && r.owner().equals(owner);
  }

  @Nullable Instance instance(ServiceKey service, InstanceKey key) {
    Registration r = core.registration(service, key);
    return r == null ? null : r.instance();
  }

  @Nullable Claim claimOf(ServiceKey service, InstanceKey key) {
    Registration r = core.registration(service, key);
    return r == null ? null : r.claim();
  }

  @Nullable Owner ownerOf(ServiceKey service, InstanceKey key) {
    Registration r = core.registration(service, key);
    return r == null ? null : r.owner();
  }

  boolean held(ServiceKey service, InstanceKey key) {
    Registration r = core.registration(service, key);
    return r != null && r.held();
  }

  Registry.@Nullable ServiceStats stats(ServiceKey service) {
    ServiceEntry e = core.entries.get(service);
    if (e == null) {
      return null;
    }
    synchronized (e) {
      int healthy = 0;
      for (Registration r : e.registrations.values()) {
        healthy += r.instance().healthy() ? 1 : 0;
      }
      return new Registry.ServiceStats(e.registrations.size(), healthy, e.revision, e.bytes);
    }
  }

  Registry.ServicePage listServices(String namespace, String group, Predicate<ServiceKey> which,
      int pageNo, int pageSize) {
    int total = 0;
    List<ServiceKey> page = new ArrayList<>(Math.min(pageSize, 128));
    int skip = (pageNo - 1) * pageSize;
    for (ServiceKey k : core.index.tailSet(lowest(namespace, group), true)) {
      if (!k.namespace().equals(namespace) || (!group.isEmpty() && !k.group().equals(group))) {
        break;
      }
      if (!which.test(k)) {
        continue;
      }
      if (total >= skip && page.size() < pageSize) {
        page.add(k);
      }
      total++;
    }
    return new Registry.ServicePage(total, page);
  }

  /**
   * Sorts before every real key of that namespace (and group): "-" is the smallest character
   * names may contain, and keys sort by {@link String#compareTo}.
   */
  private static ServiceKey lowest(String namespace, String group) {
    return new ServiceKey(namespace, group.isEmpty() ? "-" : group, "-");
  }

  List<NamespaceKinds> namespaceKinds() {
    List<NamespaceKinds> out = new ArrayList<>();
    NamespaceKinds current = null;
    for (ServiceKey k : core.index) {
      if (current == null || !k.namespace().equals(current.namespace())) {
        current = new NamespaceKinds(k.namespace());
        out.add(current);
      }
      current.addService();
      ServiceEntry e = core.entries.get(k);
      if (e != null) {
        synchronized (e) {
          for (Map.Entry<Owner, int[]> held : e.byOwner.entrySet()) {
            current.addInstances(held.getKey().kind(), held.getValue()[0]);
          }
        }
      }
    }
    return out;
  }

  /** One namespace's services and instances: O(its services). */
  NamespaceCount namespaceCount(String namespace) {
    int services = 0;
    int instances = 0;
    for (ServiceKey k : core.index.tailSet(lowest(namespace, ""), true)) {
      if (!k.namespace().equals(namespace)) {
        break;
      }
      services++;
      ServiceEntry e = core.entries.get(k);
      if (e != null) {
        synchronized (e) {
          instances += e.registrations.size();
        }
      }
    }
    return new NamespaceCount(namespace, services, instances);
  }

  /**
   * Every namespace with a service, every created one (with its details) and {@code public}, in
   * id order, with their counts.
   */
  List<NamespaceCount> namespaces(List<Namespace> created) {
    java.util.TreeMap<String, NamespaceCount> all = new java.util.TreeMap<>();
    all.put(Namespace.PUBLIC.id(), new NamespaceCount(Namespace.PUBLIC.id(), 0, 0, Namespace.PUBLIC));
    for (Namespace n : created) {
      all.put(n.id(), new NamespaceCount(n.id(), 0, 0, n));
    }
    for (NamespaceCount c : namespaces()) {
      NamespaceCount known = all.get(c.namespace());
      all.put(c.namespace(), new NamespaceCount(c.namespace(), c.services(), c.instances(),
          known == null ? null : known.details()));
    }
    return List.copyOf(all.values());
  }

  List<NamespaceCount> namespaces() {
    List<NamespaceCount> out = new ArrayList<>();
    String current = null;
    int serviceCount = 0;
    int instanceCount = 0;
    for (ServiceKey k : core.index) {
      if (!k.namespace().equals(current)) {
        if (current != null) {
          out.add(new NamespaceCount(current, serviceCount, instanceCount));
        }
        current = k.namespace();
        serviceCount = 0;
        instanceCount = 0;
      }
      serviceCount++;
      ServiceEntry e = core.entries.get(k);
      if (e != null) {
        synchronized (e) {
          instanceCount += e.registrations.size();
        }
      }
    }
    if (current != null) {
      out.add(new NamespaceCount(current, serviceCount, instanceCount));
    }
    return out;
  }
}
