package io.roster.server.model;

/**
 * Names one service: namespace ⊃ group ⊃ name. Always normalised (defaults filled in) and
 * valid; build one with {@link #of}.
 */
public record ServiceKey(String namespace, String group, String name) implements Comparable<ServiceKey> {

  public ServiceKey {
    Names.checkSimpleName("service.namespace", namespace, Names.MAX_NAMESPACE);
    Names.checkSimpleName("service.group", group, Names.MAX_GROUP);
    Names.checkServiceName("service.name", name);
  }

  /** Fills empty namespace/group with {@code public}/{@code DEFAULT_GROUP}, then validates. */
  public static ServiceKey of(String namespace, String group, String name) {
    return new ServiceKey(
        namespace == null || namespace.isEmpty() ? Names.DEFAULT_NAMESPACE : namespace,
        group == null || group.isEmpty() ? Names.DEFAULT_GROUP : group,
        name == null ? "" : name);
  }

  /** {@code group@@name}, the Nacos-style grouped name. */
  public String groupedName() {
    return group + "@@" + name;
  }

  @Override
  public int compareTo(ServiceKey o) {
    int c = namespace.compareTo(o.namespace);
    if (c != 0) {
      return c;
    }
    c = group.compareTo(o.group);
    return c != 0 ? c : name.compareTo(o.name);
  }

  @Override
  public String toString() {
    return namespace + "/" + group + "@@" + name;
  }
}
