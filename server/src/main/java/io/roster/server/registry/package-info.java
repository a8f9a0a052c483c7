/**
 * The in-memory truth of instances and their owners ({@link io.roster.server.registry.Registry}):
 * revisions, snapshots, change reports. Plain Java; knows nothing of gRPC.
 */
package io.roster.server.registry;
