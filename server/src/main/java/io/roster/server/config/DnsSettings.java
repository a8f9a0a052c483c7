package io.roster.server.config;

import java.time.Duration;

/** The DNS server: its port ({@link ServerConfig#DNS_PORT_OFF}: none) and its answers' TTL. Immutable. */
public record DnsSettings(int dnsPort, Duration dnsTtl) {}
