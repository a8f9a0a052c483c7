package io.roster.server.metrics;

import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Instant;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * {@code roster_tls_certificate_expiry_seconds{port}}: seconds from now until the notAfter of the
 * certificate each TLS port serves, read at each scrape (negative once expired). Stateless;
 * {@link ServerMetrics#certificateExpiry} registers it once.
 */
@SuppressWarnings("LongDoubleConversion") // epoch times become Prometheus's doubles
final class CertificateMetrics {

  private CertificateMetrics() {}

  /** Registers the gauge; {@code now} is the wall clock, in microseconds. */
  static void register(PrometheusRegistry prometheus, Map<String, Supplier<Instant>> notAfter, LongSupplier now) {
    GaugeWithCallback.builder().name("roster_tls_certificate_expiry_seconds")
        .help("Seconds until the certificate a TLS port serves expires (its notAfter), by port (client, http, peer); "
            + "the client and HTTP ports' follows a reload of the files, the peer port's is read at start")
        .labelNames("port").callback(cb -> {
          double nowSeconds = now.getAsLong() / 1e6;
          notAfter.forEach((port, at) -> cb.call(at.get().toEpochMilli() / 1000.0 - nowSeconds, port));
        }).register(prometheus);
  }
}
