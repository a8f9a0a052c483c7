package io.roster.server;

import io.roster.server.cluster.PeerTls;
import io.roster.server.config.ClusterSettings;
import io.roster.server.config.ServerConfig;
import io.roster.server.dns.DnsAnswers;
import io.roster.server.dns.DnsServer;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.session.RequestCounters;
import io.roster.server.time.Scheduler;
import io.roster.server.tls.ServerTls;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ports beside the client port, opened at start: the HTTP port, the DNS port, and TLS's
 * reloading with its one log line, and the certificates the TLS ports serve, for the metrics. A port that cannot be bound stops the start: the server is
 * closed ({@code onFailure}) and the error names the address and the flag that picks another.
 * Stateless; called on the starting thread.
 */
final class Listeners {

  private static final Logger log = LoggerFactory.getLogger(RosterServer.class);

  private Listeners() {}

  static void startHttp(HttpEndpoint http, ServerConfig config, Runnable onFailure) {
    try {
      http.start();
    } catch (IOException e) {
      onFailure.run();
      throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.resolvedHttpPort()
          + " (the Nacos v1 HTTP API; --http-port picks another port, or off)", e);
    }
    log.info("Nacos v1 HTTP API on {}:{}", config.host(), http.port());
  }

  static DnsServer startDns(ServerConfig config, DnsAnswers answers, RequestCounters requests, Scheduler clock,
      Runnable onFailure) {
    DnsServer dns;
    try {
      dns = DnsServer.start(config.host(), config.dns().dnsPort(), answers, requests, clock, config.dns().dnsRateLimit());
    } catch (IOException e) {
      onFailure.run();
      throw new UncheckedIOException("cannot listen on " + config.host() + ":" + config.dns().dnsPort()
          + " (the DNS port, UDP and TCP; --dns-port picks another port, or off)", e);
    }
    log.info("DNS on {}:{} (UDP and TCP), zone roster.", config.host(), dns.port());
    return dns;
  }

  static void startTls(ServerTls tls, int port, @Nullable HttpEndpoint http, Scheduler scheduler) {
    log.info("TLS on the client port {} (Roster and Nacos gRPC){}: {}; {}; files re-read every {}", port,
        http == null ? "" : " and the HTTP port " + http.port(), tls.describe(),
        tls.mutual() ? "client certificates required, signed by a CA of " + tls.files().clientCa()
            : "no client certificate asked", ServerConfig.formatDuration(ServerTls.RELOAD_PERIOD));
    tls.startReloading(scheduler, ServerTls.RELOAD_PERIOD);
  }

  /**
   * The certificates each TLS port serves, by the port's label in {@code
   * roster_tls_certificate_expiry_seconds}: the client and HTTP ports' current one (it follows
   * reloads), the peer port's as read at start (it is read once); none for a port without TLS.
   */
  static Map<String, Supplier<Instant>> certificates(@Nullable ServerTls tls, boolean http,
      @Nullable ClusterSettings cluster) {
    Map<String, Supplier<Instant>> ports = new LinkedHashMap<>();
    if (tls != null) {
      ports.put("client", tls::notAfter);
      if (http) {
        ports.put("http", tls::notAfter);
      }
    }
    Instant peer = cluster == null ? null : PeerTls.notAfter(cluster);
    if (peer != null) {
      ports.put("peer", () -> peer);
    }
    return ports;
  }
}
