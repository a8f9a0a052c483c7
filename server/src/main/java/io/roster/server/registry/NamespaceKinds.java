package io.roster.server.registry;

import io.roster.server.model.Owner;

/**
 * A namespace's services, and its instances by the kind of their owner ({@link
 * Registry#namespaceKinds}). Built by the registry's reads, then read only.
 */
public final class NamespaceKinds {
  private final String namespace;
  private int services;
  private final int[] instances = new int[Owner.Kind.values().length];

  NamespaceKinds(String namespace) {
    this.namespace = namespace;
  }

  public String namespace() {
    return namespace;
  }

  /** Its services that have instances. */
  public int services() {
    return services;
  }

  /** Its instances whose owners are of {@code kind}. */
  @SuppressWarnings("EnumOrdinal") // an index into the counts built here, never stored or sent
  public int instances(Owner.Kind kind) {
    return instances[kind.ordinal()];
  }

  void addService() {
    services++;
  }

  @SuppressWarnings("EnumOrdinal") // an index into the counts built here
  void addInstances(Owner.Kind kind, int n) {
    instances[kind.ordinal()] += n;
  }

  /** All its instances. */
  public int instances() {
    int sum = 0;
    for (int n : instances) {
      sum += n;
    }
    return sum;
  }
}
