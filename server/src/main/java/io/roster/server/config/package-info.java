/** The one immutable {@link io.roster.server.config.ServerConfig}, from flags, env and defaults. */
package io.roster.server.config;
