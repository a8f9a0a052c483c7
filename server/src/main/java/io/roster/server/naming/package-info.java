/**
 * The transport-neutral application layer: the protocol rules every adapter applies the same
 * way, on plain values (no gRPC, no protobuf). {@link io.roster.server.naming.Hellos} checks a
 * hello and opens the session; {@link io.roster.server.naming.Updates} applies UpdateInstance
 * and UpdateService (ranges, metadata replace-or-merge); {@link
 * io.roster.server.naming.DrainTimeouts} is the drain timeout rule; {@link
 * io.roster.server.naming.LogText} makes client text safe for a log line; {@link
 * io.roster.server.naming.Leases} keeps heartbeat instances (the Nacos v1 HTTP API) alive and
 * decides their expiry. The gRPC adapters in {@code rpc} map proto to these values and
 * delegate; the Nacos adapters (gRPC and HTTP) do too.
 *
 * <p>May depend on {@code session}, {@code push}, {@code registry} and {@code model}, never on
 * an adapter.
 */
@NullMarked
package io.roster.server.naming;

import org.jspecify.annotations.NullMarked;
