/**
 * Durable state on disk (docs/persistence.md): the {@code --data-dir} and its layout ({@link
 * io.roster.server.store.DataDir}, where a cluster member's Raft log lives too), a standalone
 * server's state file and journal ({@link io.roster.server.store.StateStore}, written through
 * {@link io.roster.server.store.DurableWriter}), backups and their restore ({@link
 * io.roster.server.store.Backup}), and the {@code check} and {@code repair} commands ({@link
 * io.roster.server.store.DataDirCommand}). Plugged in through {@code registry.Writer}; its facts
 * are log.proto messages of {@code codec}'s values, the same as the cluster's log keeps.
 *
 * <p>May depend on {@code codec}, {@code registry}, {@code model} and {@code time}, never on
 * {@code cluster} or an adapter (decision 90).
 */
@NullMarked
package io.roster.server.store;

import org.jspecify.annotations.NullMarked;
