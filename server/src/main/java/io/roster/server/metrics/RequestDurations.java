package io.roster.server.metrics;

import io.prometheus.metrics.core.datapoints.DistributionDataPoint;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.roster.server.session.RequestCounters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code roster_request_duration_seconds}: each request's duration, by protocol and type, the
 * same bounded label values {@code roster_requests_total} counts under (decision 99 says why the
 * buckets run from 0.5 ms to 10 s).
 *
 * <p>One observation per request, on the path that counts it: the histogram's data point of a
 * (protocol, type) is looked up once and kept, so observing allocates nothing after a type's first
 * request. Thread-safe.
 */
@SuppressWarnings("EnumOrdinal") // a protocol's index into the data points kept here, never stored or sent
final class RequestDurations implements RequestCounters.Durations {

  /** Upper bounds (seconds): 0.5 ms, the fastest answers from memory, to 10 s, a write that waits on the cluster. */
  static final double[] BUCKETS = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

  private final Histogram histogram;
  private final List<Map<String, DistributionDataPoint>> points = new ArrayList<>();

  RequestDurations(PrometheusRegistry prometheus) {
    histogram = Histogram.builder().name("roster_request_duration_seconds")
        .help("How long requests took, from their arrival to their answer, by protocol and type")
        .labelNames("protocol", "type").classicOnly().classicUpperBounds(BUCKETS).withoutExemplars()
        .register(prometheus);
    for (int i = 0; i < RequestCounters.Protocol.values().length; i++) {
      points.add(new ConcurrentHashMap<>());
    }
  }

  @Override
  public void took(RequestCounters.Protocol protocol, String type, long nanos) {
    Map<String, DistributionDataPoint> byType = points.get(protocol.ordinal());
    DistributionDataPoint point = byType.get(type);
    if (point == null) {
      point = byType.computeIfAbsent(type, t -> histogram.labelValues(protocol.label(), t));
    }
    point.observe(nanos / 1e9);
  }
}
