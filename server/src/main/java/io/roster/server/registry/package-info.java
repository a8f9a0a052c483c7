/**
 * The in-memory truth of instances and their owners ({@link io.roster.server.registry.Registry}):
 * revisions, snapshots, the per-owner index, and changes reported as {@link
 * io.roster.server.registry.Change} values to any number of listeners; and whether it may still
 * lack live registrations after a start ({@link io.roster.server.registry.WarmUp}); whether this
 * server serves its registry at all, and is ready, as every port asks it ({@link
 * io.roster.server.registry.Readiness}, decision 86). Plain Java;
 * knows nothing of gRPC.
 */
@NullMarked
package io.roster.server.registry;

import org.jspecify.annotations.NullMarked;
