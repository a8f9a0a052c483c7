package io.roster.server.naming;

import io.roster.server.auth.Audit;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.RegistryException;
import io.roster.server.registry.Command;
import io.roster.server.registry.Namespace;
import io.roster.server.registry.NamespaceCount;
import io.roster.server.registry.Registry;
import io.roster.server.registry.Writer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Namespaces created, edited, deleted and listed, whatever the API (decision 97): Roster's admin
 * API and Nacos's console API map their parameters to these calls. A change needs {@code admin}
 * on the namespace, is checked ({@link Namespace#checked}) before it is submitted, goes through
 * the server's {@link Writer} (the log, in a cluster; the journal, standalone), and is audited
 * with its result. Refusals are {@link RegistryException}s naming the field, the value and the
 * limit; a refused change changes nothing.
 *
 * <p>Thread-safe; stateless beyond what it is given.
 */
public final class NamespaceChanges {

  private final Registry registry;
  private final Writer writer;

  public NamespaceChanges(Registry registry, Writer writer) {
    this.registry = registry;
    this.writer = writer;
  }

  /** Every namespace {@code who} may read, with its counts (see {@link io.roster.server.registry.NamespaceBook#list}). */
  public List<NamespaceCount> list(Principal who) {
    return registry.namespaceBook().list().stream().filter(n -> who.allowsAll(Permission.READ, n.namespace())).toList();
  }

  /** Creates a namespace; completes with it as stored, or fails with the refusal. */
  public CompletableFuture<Namespace> create(Principal who, String id, String name, String description) {
    return change(who, "CreateNamespace", id, () -> new Command.PutNamespace(Namespace.checked(id, name, description),
        true), "name=" + LogText.of(name));
  }

  /** Edits a namespace's name and description; completes with it as stored, or fails with the refusal. */
  public CompletableFuture<Namespace> edit(Principal who, String id, String name, String description) {
    return change(who, "EditNamespace", id, () -> new Command.PutNamespace(Namespace.checked(id, name, description),
        false), "name=" + LogText.of(name));
  }

  /** Deletes an empty namespace; completes with it as it was, or fails with the refusal (its counts when not empty). */
  public CompletableFuture<Namespace> delete(Principal who, String id) {
    return change(who, "DeleteNamespace", id, () -> {
      Namespace.checkId("namespaceId", id);
      return new Command.DeleteNamespace(id);
    }, "");
  }

  @FunctionalInterface
  private interface Build {
    Command<Namespace> command();
  }

  private CompletableFuture<Namespace> change(Principal who, String action, String id, Build build, String change) {
    String target = "namespace " + LogText.of(id);
    Command<Namespace> command;
    try {
      Namespace.checkId("namespaceId", id);
      who.checkAll(Permission.ADMIN, id);
      command = build.command();
    } catch (RegistryException e) {
      Audit.log(who, action, target, change, e.getMessage());
      return CompletableFuture.failedFuture(e);
    }
    CompletableFuture<Namespace> applied;
    try {
      applied = writer.submit(command);
    } catch (RegistryException e) {
      Audit.log(who, action, target, change, e.getMessage());
      return CompletableFuture.failedFuture(e);
    }
    return applied.whenComplete((ns, failed) -> Audit.log(who, action, target, change,
        failed == null ? "ok" : String.valueOf(unwrap(failed).getMessage())));
  }

  private static Throwable unwrap(Throwable t) {
    Throwable cause = t;
    while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }
}
