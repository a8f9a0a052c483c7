/**
 * Connected clients ({@link io.roster.server.session.Session}): what each owns (as the owner
 * (this node, kind, connection id), through the registry's per-owner index), its limits, and
 * cleanup when it ends; whether new connections are welcome ({@link
 * io.roster.server.session.Admission}); and moving a client elsewhere whatever its protocol
 * ({@link io.roster.server.session.SessionManager#move}). Plain Java; the protocol adapters
 * (rpc, nacos) drive it from their streams.
 */
@NullMarked
package io.roster.server.session;

import org.jspecify.annotations.NullMarked;
