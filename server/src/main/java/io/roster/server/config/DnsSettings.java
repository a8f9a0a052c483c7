package io.roster.server.config;

import java.time.Duration;

/**
 * The DNS server: its port ({@link ServerConfig#DNS_PORT_OFF}: none), its answers' TTL and its
 * UDP answers a second per source prefix (0: no limit). Immutable.
 */
public record DnsSettings(int dnsPort, Duration dnsTtl, int dnsRateLimit) {}
