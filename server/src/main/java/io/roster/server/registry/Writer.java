package io.roster.server.registry;

import java.util.concurrent.CompletableFuture;

/**
 * Where changes to the registry go: applied at once on a standalone server ({@link #direct}),
 * or proposed to the cluster's log and applied once committed (the {@code cluster} package).
 *
 * <p>Commands submitted from one thread, or in an order their callers serialise (a session's
 * lock), are applied in that order.
 */
public interface Writer {

  /**
   * Submits {@code command}; the future completes with its result once it has been applied to
   * this node's registry, or fails with the {@link io.roster.server.model.RegistryException}
   * that refused it (or UNAVAILABLE when it could not be committed). A writer may also throw a
   * refusal it knows at once.
   */
  <R> CompletableFuture<R> submit(Command<R> command);

  /**
   * The standalone writer: applies each command to {@code registry} on the calling thread and
   * returns a completed future; a refusal is thrown from {@code submit} itself, as a direct
   * call to the registry would.
   */
  static Writer direct(Registry registry) {
    return new Writer() {
      @Override
      public <R> CompletableFuture<R> submit(Command<R> command) {
        return CompletableFuture.completedFuture(command.applyTo(registry));
      }

      @Override
      public String toString() {
        return "direct writer";
      }
    };
  }
}
