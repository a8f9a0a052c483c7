/**
 * The in-memory truth of instances and their owners ({@link io.roster.server.registry.Registry}):
 * revisions, snapshots, change reports; and whether it may still lack live registrations after a
 * start ({@link io.roster.server.registry.WarmUp}). Plain Java; knows nothing of gRPC.
 */
package io.roster.server.registry;
