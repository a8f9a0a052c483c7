/**
 * Server-side probes of persistent instances (docs/persistence.md, "Server-side probes"): which
 * member probes which instance ({@link io.roster.server.probe.HealthProbes}), and the TCP and HTTP
 * probes themselves ({@link io.roster.server.probe.ProbeClient}). Only a change of health goes
 * to the registry's writer, and so through the cluster's log.
 */
@NullMarked
package io.roster.server.probe;

import org.jspecify.annotations.NullMarked;
