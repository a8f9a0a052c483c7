/**
 * Connected clients ({@link io.roster.server.session.Session}): what each owns (as the owner
 * (this node, SESSION, connection id), through the registry's per-owner index), its limits,
 * and cleanup when it ends. Plain Java; the rpc layer drives it from the gRPC stream.
 */
package io.roster.server.session;
