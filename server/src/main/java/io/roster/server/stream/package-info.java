/**
 * The server's side of a long-lived gRPC stream, shared by the adapters that hold one open
 * ({@code rpc}'s Connect and Watch, {@code nacos}'s bidirectional stream): {@link
 * io.roster.server.stream.StreamWriter}, the one guard every write to such a stream goes through,
 * and {@link io.roster.server.stream.StreamExecutor}, the stream's own serial executor, where
 * what it writes after a wait is written (decision 94).
 *
 * <p>A package of its own because of where it sits: adapters do not import each other, so it
 * cannot live in {@code rpc} or {@code nacos}; and {@code session} and {@code naming} are plain
 * Java on plain values, with no gRPC in them. It depends on gRPC's stub API alone, and any
 * adapter may use it.
 */
@NullMarked
package io.roster.server.stream;

import org.jspecify.annotations.NullMarked;
