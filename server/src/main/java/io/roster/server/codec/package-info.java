/**
 * The durable format's values (decision 90): {@link io.roster.server.codec.ValueCodec} turns the
 * registry's values into the messages of log.proto and back, for the two packages that keep them,
 * {@code cluster} (log entries and snapshots, decision 58) and {@code store} (the standalone
 * server's files and backups). The log's own framing (its commands and formats) stays with the
 * log, in {@code cluster}. May depend on {@code registry} and {@code model} alone.
 */
@NullMarked
package io.roster.server.codec;

import org.jspecify.annotations.NullMarked;
