/**
 * Server-side probes of persistent instances (docs/persistence.md, "Server-side probes"): which
 * member probes which instance ({@link io.roster.server.probe.HealthProbes}), and the TCP and HTTP
 * probes themselves ({@link io.roster.server.probe.ProbeClient}), and where they may go ({@link
 * io.roster.server.probe.ProbePolicy}, {@code --probe-allow}, decision 81: persistent registrations
 * outside it are refused in {@code naming}, and the prober skips them). Only a change of health
 * goes to the registry's writer, and so through the cluster's log.
 */
@NullMarked
package io.roster.server.probe;

import org.jspecify.annotations.NullMarked;
