package io.roster.server.registry;

import org.jspecify.annotations.Nullable;

/**
 * A namespace and how many services and instances it has ({@link NamespaceBook}).
 *
 * @param details its name and description: the operator's record of a created namespace, {@link
 *     Namespace#PUBLIC} for {@code public}; null for a namespace that exists only because services
 *     are registered in it
 */
public record NamespaceCount(String namespace, int services, int instances, @Nullable Namespace details) {

  /** One without details. */
  public NamespaceCount(String namespace, int services, int instances) {
    this(namespace, services, instances, null);
  }

  /** Whether it has neither services nor instances. */
  public boolean empty() {
    return services == 0 && instances == 0;
  }
}
