/**
 * The Roster Java client: register instances, look up and subscribe to services.
 *
 * <p>Entry point: {@link io.roster.client.RosterClient#builder()}. The public surface is small:
 * {@link io.roster.client.RosterClient} (thread-safe, one per application),
 * {@link io.roster.client.Instance} (an immutable, validated value),
 * {@link io.roster.client.Listener} and {@link io.roster.client.InstancesChangeEvent}
 * (subscriptions: the full list plus the difference), {@link io.roster.client.ServicePage} and
 * {@link io.roster.client.RosterException} (the one unchecked exception, with a code; its
 * subtype {@link io.roster.client.ClientClosedException} after close). Everything else lives in
 * {@code io.roster.client.internal} and is not part of the API.
 *
 * <p>Invalid values fail fast with {@code RosterException} code {@code INVALID_ARGUMENT}; null
 * arguments with {@link java.lang.NullPointerException}.
 */
@NullMarked
package io.roster.client;

import org.jspecify.annotations.NullMarked;
