package io.roster.server.metrics;

import io.prometheus.metrics.core.metrics.Histogram;

/**
 * The metrics' share of the start's priming: one observation of a scratch histogram built as the
 * server's are (registered nowhere), so that the first push a client acks does not pay for the
 * Prometheus library's first observation (its data points, exemplar sampler and the tracer lookup
 * behind it), which a fresh server's first Nacos ack did on the stream's own thread.
 *
 * <p>Thread-safe: it holds nothing.
 */
public final class HistogramPriming {

  private HistogramPriming() {}

  /** Observes one value on a scratch histogram; returns what it primed, for the priming's report. */
  public static String run() {
    Histogram scratch = Histogram.builder().name("roster_primer_seconds").help("scratch, registered nowhere")
        .classicOnly().classicUpperBounds(0.001, 0.01, 0.1, 1).build();
    scratch.observe(0.002);
    return "metrics: histogram observation";
  }
}
