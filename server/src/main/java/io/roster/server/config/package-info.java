/** The one immutable {@link io.roster.server.config.ServerConfig}, from flags, env and defaults. */
@NullMarked
package io.roster.server.config;

import org.jspecify.annotations.NullMarked;
