/**
 * Time, read only here: the injected clock and scheduler ({@link io.roster.server.time.Scheduler},
 * {@link io.roster.server.time.SystemScheduler}) for every timing decision and the wall clock,
 * {@link io.roster.server.time.Deadline} for the real-time end of a blocking wait and {@link
 * io.roster.server.time.Stopwatch} for reports (decision 57).
 */
@NullMarked
package io.roster.server.time;

import org.jspecify.annotations.NullMarked;
