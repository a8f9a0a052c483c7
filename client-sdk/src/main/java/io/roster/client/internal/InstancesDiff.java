package io.roster.client.internal;

import io.roster.client.Instance;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The difference between two instance lists of one service, by identity (ip, port, cluster).
 *
 * @param added identities only in the new list (new values)
 * @param removed identities only in the old list (old values)
 * @param modified identities in both whose content differs (new values)
 */
record InstancesDiff(List<Instance> added, List<Instance> removed, List<Instance> modified) {

  /** Identity of an instance inside a service. */
  record Identity(String ip, int port, String cluster) {
    static Identity of(Instance i) {
      return new Identity(i.ip(), i.port(), i.cluster());
    }
  }

  InstancesDiff {
    added = List.copyOf(added);
    removed = List.copyOf(removed);
    modified = List.copyOf(modified);
  }

  /** Computes the difference; lists keep the order of the list they come from. */
  static InstancesDiff between(List<Instance> before, List<Instance> after) {
    Map<Identity, Instance> old = index(before);
    Map<Identity, Instance> now = index(after);
    List<Instance> added = new ArrayList<>();
    List<Instance> modified = new ArrayList<>();
    for (Map.Entry<Identity, Instance> e : now.entrySet()) {
      Instance previous = old.get(e.getKey());
      if (previous == null) {
        added.add(e.getValue());
      } else if (!previous.equals(e.getValue())) {
        modified.add(e.getValue());
      }
    }
    List<Instance> removed = new ArrayList<>();
    for (Map.Entry<Identity, Instance> e : old.entrySet()) {
      if (!now.containsKey(e.getKey())) {
        removed.add(e.getValue());
      }
    }
    return new InstancesDiff(added, removed, modified);
  }

  /** True when nothing was added, removed or modified: the visible content is the same. */
  boolean isEmpty() {
    return added.isEmpty() && removed.isEmpty() && modified.isEmpty();
  }

  private static Map<Identity, Instance> index(List<Instance> list) {
    Map<Identity, Instance> map = new LinkedHashMap<>();
    for (Instance i : list) {
      map.put(Identity.of(i), i);
    }
    return map;
  }
}
