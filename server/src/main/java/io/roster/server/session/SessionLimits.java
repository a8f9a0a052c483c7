package io.roster.server.session;

/** Per-connection limits. */
public record SessionLimits(int maxInstances, int maxSubscriptions) {}
