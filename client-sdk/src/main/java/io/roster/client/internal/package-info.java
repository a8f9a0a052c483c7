/**
 * The client's machinery; not part of the API and free to change.
 *
 * <p>{@link io.roster.client.internal.DefaultRosterClient} (entry point, created by the
 * builder) checks arguments and delegates to its parts, sharing one client lock among them:
 * {@link io.roster.client.internal.DesiredState} holds the registrations and reconciles them
 * (and the subscriptions) onto the session kept by
 * {@link io.roster.client.internal.ConnectionManager} (one {@code Session/Connect} stream at a
 * time, rotation with {@link io.roster.client.internal.Backoff}, redo after every welcome,
 * keepalive pings); {@link io.roster.client.internal.SubscriptionCache} holds the subscribed
 * services with the hold ({@link io.roster.client.internal.ShrinkHold}), push-empty protection,
 * failover and ack rules; {@link io.roster.client.internal.Queries} answers one-off reads.
 * {@link io.roster.client.internal.Subscription} is the per-service cache that only moves
 * forward and runs listener events in order through a
 * {@link io.roster.client.internal.SerialExecutor}; {@link io.roster.client.internal.Poller} is
 * the poll fallback; {@link io.roster.client.internal.Balancer} filters and picks instances.
 * Protobuf is confined to {@link io.roster.client.internal.ProtoMapper} and the transport
 * ({@link io.roster.client.internal.Connector}, {@link io.roster.client.internal.GrpcConnector}).
 * Time comes from an injected ticker and scheduler so unit tests run on a fake clock.
 */
package io.roster.client.internal;
