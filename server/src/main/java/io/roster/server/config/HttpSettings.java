package io.roster.server.config;

import java.time.Duration;

/**
 * The Nacos v1 HTTP listener: its port ({@link ServerConfig#HTTP_PORT_AUTO}, {@link
 * ServerConfig#HTTP_PORT_OFF} or a port; {@link ServerConfig#resolvedHttpPort()} resolves it) and
 * how long a request may take to arrive. Immutable.
 */
public record HttpSettings(int httpPort, Duration httpRequestTimeout) {}
