/** The injected clock and scheduler ({@link io.roster.server.time.Scheduler}). */
package io.roster.server.time;
