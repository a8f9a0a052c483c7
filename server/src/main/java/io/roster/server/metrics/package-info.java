/**
 * What Prometheus reads (docs/observability.md): {@link io.roster.server.metrics.ServerMetrics}
 * turns the counters the server's parts keep into Prometheus metrics at each scrape, beside the
 * JVM's; {@link io.roster.server.metrics.MetricsApi} serves them at {@code /metrics} and serves
 * the registry's instances as Prometheus HTTP service discovery targets (decision 69).
 */
@NullMarked
package io.roster.server.metrics;

import org.jspecify.annotations.NullMarked;
