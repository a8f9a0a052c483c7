package io.roster.server.config;

import io.roster.server.probe.ProbePolicy;
import java.time.Duration;

/**
 * The probes of persistent instances: how often, how long one may take, how many in a row flip
 * an instance's health, and where the server may probe ({@code --probe-*}). Immutable; {@link
 * ServerConfig} checks the bounds.
 */
public record ProbeSettings(Duration probeInterval, Duration probeTimeout, int probeThreshold,
    ProbePolicy probeAllow) {}
