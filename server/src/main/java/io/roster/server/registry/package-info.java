/**
 * The in-memory truth of instances and their owners ({@link io.roster.server.registry.Registry}):
 * revisions, snapshots, the per-owner index, and changes reported as {@link
 * io.roster.server.registry.Change} values to any number of listeners; and whether it may still
 * lack live registrations after a start ({@link io.roster.server.registry.WarmUp}); whether this
 * server serves its registry at all, and is ready, as every port asks it ({@link
 * io.roster.server.registry.Readiness}, decision 86). Plain Java;
 * knows nothing of gRPC. {@code Registry} is the facade; its seams are package-private classes
 * (the core {@code Services}, a service's {@code ServiceEntry}, {@code Queries}, {@code Images},
 * {@code Holds}, {@code Departures}). Change listeners are called outside every registry lock;
 * a {@link io.roster.server.registry.HoldListener} under a service's, and must only hand over.
 *
 * <p><b>Lock order</b> (docs/decisions.md, record 91): where the server holds more than one
 * monitor it takes them in this order, never the other way: a session ({@code session.Session}),
 * a service of the registry ({@code registry.ServiceEntry}), a service's push coalescing ({@code
 * push.PushEngine}), a session's push queue ({@code push.PushQueue}), the transport's write lock
 * ({@code rpc}'s stream, a Nacos connection). {@code LockOrderTest} checks it.
 */
@NullMarked
package io.roster.server.registry;

import org.jspecify.annotations.NullMarked;
