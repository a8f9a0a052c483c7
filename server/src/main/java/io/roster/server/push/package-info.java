/**
 * From change to push (docs/protocol.md, "Pushes and pushAck"): {@link io.roster.server.push.PushEngine} coalesces per
 * service, builds one payload per revision and fans out to subscribers;
 * {@link io.roster.server.push.PushQueue} is a session's latest-wins, readiness-driven,
 * acked outbound queue; {@link io.roster.server.push.DeltaPushes} turns a state into a delta
 * against the one a session acked, for sessions that take deltas. Plain Java (and Caffeine);
 * the rpc layer supplies the encoder and the {@link io.roster.server.push.Outbound}.
 */
@NullMarked
package io.roster.server.push;

import org.jspecify.annotations.NullMarked;
