/**
 * The transport-neutral application layer: the protocol rules every adapter applies the same
 * way, on plain values (no gRPC, no protobuf). {@link io.roster.server.naming.DrainTimeouts} is
 * the drain timeout rule. The gRPC adapters in {@code rpc} map proto to these values and
 * delegate; the HTTP and Nacos adapters will too.
 *
 * <p>May depend on {@code session}, {@code push}, {@code registry} and {@code model}, never on
 * an adapter.
 */
package io.roster.server.naming;
