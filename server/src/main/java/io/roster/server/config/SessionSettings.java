package io.roster.server.config;

import java.time.Duration;

/**
 * What a session is allowed and owed: how often it must be heard from, how pushes to it are
 * merged and re-sent, and the warm-up after a start ({@code --keepalive-*}, {@code --push-*},
 * {@code --warm-up*}). Immutable; {@link ServerConfig} checks the bounds.
 */
public record SessionSettings(Duration keepaliveTime, Duration keepaliveTimeout, Duration pushWindow,
    Duration pushAckTimeout, Duration warmUp, Duration warmUpQuiet) {}
