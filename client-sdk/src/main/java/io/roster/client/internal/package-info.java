/**
 * The client's machinery; not part of the API and free to change. Its public types are how the
 * builder creates a client: {@link io.roster.client.internal.ClientFactory} takes one
 * {@link io.roster.client.internal.ClientOptions}, whose TLS files
 * {@link io.roster.client.internal.TlsSettings#load} reads.
 *
 * <p><b>Parts.</b> {@link io.roster.client.internal.DefaultRosterClient} (the entry point) checks
 * arguments and delegates to its parts: {@link io.roster.client.internal.DesiredState} holds the
 * registrations and reconciles them (and the subscriptions) onto the active session;
 * {@link io.roster.client.internal.ConnectionManager} is the connect and keepalive loop (one
 * {@code Session/Connect} stream at a time, rotation with
 * {@link io.roster.client.internal.Backoff}, redo after every welcome, a
 * {@link io.roster.client.internal.Keepalive} for the active session): its state machine is a
 * {@link io.roster.client.internal.ConnectLoop}, with the server order in
 * {@link io.roster.client.internal.ServerRotation}, sessions opened by
 * {@link io.roster.client.internal.SessionOpener}, the redo's follow-up in
 * {@link io.roster.client.internal.Redo}, refused credentials in
 * {@link io.roster.client.internal.AuthRefusals}, spent sessions in
 * {@link io.roster.client.internal.SpentSessions} and waiting callers in
 * {@link io.roster.client.internal.ActiveWaiters}; the loop owns
 * {@link io.roster.client.internal.Mover}, the make-before-break move to another server, which
 * asks it only through {@code Mover.Loop};
 * {@link io.roster.client.internal.SubscriptionCache} holds the subscribed services with the
 * hold ({@link io.roster.client.internal.ShrinkHold}), push-empty protection, failover and ack
 * rules; {@link io.roster.client.internal.Queries} answers one-off reads.
 * {@link io.roster.client.internal.Subscription} is the per-service cache that only moves
 * forward and runs listener events in order through a
 * {@link io.roster.client.internal.SerialExecutor} on the listener executor;
 * {@link io.roster.client.internal.Poller} is the poll fallback, which keeps its own timers;
 * {@link io.roster.client.internal.Balancer} filters and picks instances.
 *
 * <p><b>Threading.</b> There is no client lock. The state of the loop, the move, the desired
 * state, the subscriptions, the hold and the polls changes only in one
 * {@link io.roster.client.internal.SerialContext} per client: a queue of short tasks run one at
 * a time by whichever thread enters it, never re-entrant, never running user code. Each part
 * owns its fields privately; the others ask it through its methods, from tasks (a
 * {@link io.roster.client.internal.Session}'s lifecycle and welcome, a
 * {@link io.roster.client.internal.Subscription}'s state). Stream events, timers and answers
 * become tasks, added without waiting: a transport, timer or answer thread runs the queue when
 * nobody does and otherwise returns at once, never parked behind another thread's tasks; only a
 * blocking API call runs its step as a task and waits for the result on its own thread, outside
 * the context.
 *
 * <p><b>Wire.</b> Protobuf is confined to {@link io.roster.client.internal.ProtoMapper} and the
 * transport: {@link io.roster.client.internal.Connector} and
 * {@link io.roster.client.internal.GrpcConnector} (the calls),
 * {@link io.roster.client.internal.SessionStream} and
 * {@link io.roster.client.internal.Session} (one stream: frames out, results and events in),
 * {@link io.roster.client.internal.RegistryCalls} (the {@code Registry} calls). The other parts
 * speak {@link io.roster.client.internal.Request}, {@link io.roster.client.internal.Answer},
 * {@link io.roster.client.internal.SessionEvents}, {@link io.roster.client.internal.Delta} and
 * {@link io.roster.client.internal.QueryAnswer}.
 *
 * <p>Time comes from an injected ticker and scheduler so unit tests run on a fake clock.
 */
@NullMarked
package io.roster.client.internal;

import org.jspecify.annotations.NullMarked;
