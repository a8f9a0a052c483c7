/**
 * The server's settings, from flags, environment and defaults: the one immutable {@link
 * io.roster.server.config.ServerConfig}, made of a record per concern (sessions, limits, cluster,
 * HTTP, TLS, auth, DNS, probes) so that each part of the server takes only its own; {@code Flags}
 * is the table of flags (names, environment variables, defaults and the --help text), and {@code
 * Checks} checks the values together, in one place and one order, naming the flag, the value and
 * the limit.
 */
@NullMarked
package io.roster.server.config;

import org.jspecify.annotations.NullMarked;
