/**
 * Connected clients ({@link io.roster.server.session.Session}): what each owns (as the owner
 * (this node, kind, connection id), through the registry's per-owner index), its limits, and
 * cleanup when it ends; whether new connections are welcome ({@link
 * io.roster.server.session.Admission}); and moving a client elsewhere whatever its protocol
 * ({@link io.roster.server.session.SessionManager#move}). Plain Java; the protocol adapters
 * (rpc, nacos) drive it from their streams. A session holds its push targets, which its push
 * queue hands out; pushes go from the engine to the queue without passing through here.
 *
 * <p><b>Lock order</b> (docs/decisions.md, record 91): where the server holds more than one
 * monitor it takes them in this order, never the other way: a session ({@code session.Session}),
 * a service of the registry ({@code registry.ServiceEntry}), a service's push coalescing ({@code
 * push.PushEngine}), a session's push queue ({@code push.PushQueue}), the transport's write lock
 * ({@code rpc}'s stream, a Nacos connection). {@code LockOrderTest} checks it.
 */
@NullMarked
package io.roster.server.session;

import org.jspecify.annotations.NullMarked;
