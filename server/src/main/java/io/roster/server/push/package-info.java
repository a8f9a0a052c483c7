/**
 * From change to push (docs/protocol.md, "Pushes and pushAck"): {@link io.roster.server.push.PushEngine} coalesces per
 * service, builds one payload per revision and fans out to subscribers;
 * {@link io.roster.server.push.PushQueue} is a session's latest-wins, readiness-driven,
 * acked outbound queue; {@link io.roster.server.push.DeltaPushes} turns a state into a delta
 * against the one a session acked, for sessions that take deltas. Plain Java (and Caffeine);
 * the rpc layer supplies the encoder and the {@link io.roster.server.push.Outbound}. A session's
 * subscriptions are targets its queue hands out ({@link io.roster.server.push.PushQueue#target}):
 * this package knows nothing of sessions.
 *
 * <p><b>Lock order</b> (docs/decisions.md, record 91): where the server holds more than one
 * monitor it takes them in this order, never the other way: a session ({@code session.Session}),
 * a service of the registry ({@code registry.ServiceEntry}), a service's push coalescing ({@code
 * push.PushEngine}), a session's push queue ({@code push.PushQueue}), the transport's write lock
 * ({@code rpc}'s stream, a Nacos connection). {@code LockOrderTest} checks it.
 */
@NullMarked
package io.roster.server.push;

import org.jspecify.annotations.NullMarked;
