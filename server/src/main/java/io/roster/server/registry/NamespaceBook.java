package io.roster.server.registry;

import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import java.util.List;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.jspecify.annotations.Nullable;

/**
 * The registry's namespaces (decision 97): those operators created, by id, and each namespace's
 * counts. {@link Command.PutNamespace} and {@link Command.DeleteNamespace} change it, through the
 * server's writer (the log, in a cluster), and an {@link Registry.Image} carries it. Bounded by
 * {@link Namespace#MAX_CREATED}.
 *
 * <p>Thread-safe: changes are serialised on this object; reads take no lock.
 */
public final class NamespaceBook {

  private final NavigableMap<String, Namespace> created = new ConcurrentSkipListMap<>();
  private final Queries queries;

  NamespaceBook(Queries queries) {
    this.queries = queries;
  }

  /** The created namespaces, in id order. */
  public List<Namespace> created() {
    return List.copyOf(created.values());
  }

  /**
   * Every namespace: {@code public}, each created one and each that has a service, in id order,
   * with their counts and, where known, their name and description.
   */
  public List<NamespaceCount> list() {
    return queries.namespaces(created());
  }

  /** Every namespace that has a service, in order, with its counts (no details). */
  public List<NamespaceCount> withServices() {
    return queries.namespaces();
  }

  /** One namespace's counts, with its details when it was created (or is {@code public}). */
  public NamespaceCount count(String id) {
    NamespaceCount c = queries.namespaceCount(id);
    Namespace details = id.equals(Namespace.PUBLIC.id()) ? Namespace.PUBLIC : created.get(id);
    return new NamespaceCount(id, c.services(), c.instances(), details);
  }

  /** Whether {@code id} exists: {@code public}, created, or with a service. */
  public boolean exists(String id) {
    NamespaceCount c = count(id);
    return c.details() != null || !c.empty();
  }

  /**
   * Creates ({@code create}) or edits a namespace; returns it as stored. Refused, with nothing
   * changed: a create of one that exists (created, with services, or {@code public}) with
   * FAILED_PRECONDITION; an edit of one that does not with NOT_FOUND; an edit of {@code public}
   * with INVALID_ARGUMENT; a create over {@link Namespace#MAX_CREATED} with RESOURCE_EXHAUSTED.
   */
  public synchronized Namespace put(Namespace ns, boolean create) {
    String id = ns.id();
    if (id.equals(Names.DEFAULT_NAMESPACE)) {
      throw new RegistryException(create ? RegistryException.Kind.FAILED_PRECONDITION
          : RegistryException.Kind.INVALID_ARGUMENT, "namespaceId",
          "namespaceId: \"public\" is the default namespace, which always exists and cannot be changed");
    }
    boolean known = created.containsKey(id) || !queries.namespaceCount(id).empty();
    if (create && known) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "namespaceId",
          "namespaceId: \"" + id + "\" already exists");
    }
    if (!create && !known) {
      throw new RegistryException(RegistryException.Kind.NOT_FOUND, "namespaceId",
          "namespaceId: \"" + id + "\" does not exist");
    }
    if (!created.containsKey(id) && created.size() >= Namespace.MAX_CREATED) {
      throw new RegistryException(RegistryException.Kind.RESOURCE_EXHAUSTED, "namespaceId",
          "namespaceId: \"" + id + "\" would be created namespace " + (created.size() + 1) + ", over the limit of "
              + Namespace.MAX_CREATED);
    }
    created.put(id, ns);
    return ns;
  }

  /**
   * Deletes an empty created namespace; returns it as it was. Refused, with nothing changed:
   * {@code public}, and one with services or instances (naming its counts), with
   * FAILED_PRECONDITION; one never created with NOT_FOUND.
   */
  public synchronized Namespace delete(String id) {
    if (id.equals(Names.DEFAULT_NAMESPACE)) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "namespaceId",
          "namespaceId: \"public\" is the default namespace and cannot be deleted");
    }
    NamespaceCount count = queries.namespaceCount(id);
    if (!count.empty()) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "namespaceId",
          "namespaceId: \"" + id + "\" is not empty: it has " + count.services() + " services and "
              + count.instances() + " instances; only an empty namespace can be deleted");
    }
    Namespace ns = created.remove(id);
    if (ns == null) {
      throw new RegistryException(RegistryException.Kind.NOT_FOUND, "namespaceId",
          "namespaceId: \"" + id + "\" does not exist");
    }
    return ns;
  }

  /** The created namespace {@code id}, or null. */
  public @Nullable Namespace get(String id) {
    return created.get(id);
  }

  /** Undoes a create that could not be made durable (the standalone writer): as if never created. */
  public synchronized void forget(String id) {
    created.remove(id);
  }

  /** Undoes a delete that could not be made durable (the standalone writer): the namespace as it was. */
  public synchronized void restoreOne(Namespace namespace) {
    created.put(namespace.id(), namespace);
  }

  /** Replaces every created namespace (an image restored). */
  synchronized void restore(List<Namespace> namespaces) {
    created.clear();
    namespaces.forEach(n -> created.put(n.id(), n));
  }
}
