package io.roster.server.config;

/**
 * How much one client connection, one remote address and one service may hold, and the largest
 * message read ({@code --max-*}). Immutable; {@link ServerConfig} checks the bounds.
 */
public record Limits(int maxInstancesPerConnection, int maxSubscriptionsPerConnection, int maxSessionsPerConnection,
    int maxWatchesPerConnection, int maxSessionsPerAddress, int maxInstancesPerAddress, int maxMessageSize,
    long maxServiceSettingsBytes, int maxInstancesPerService, long maxServiceBytes) {}
