package io.roster.bench;

import java.util.Arrays;
import java.util.Collection;

/**
 * Percentiles of a set of samples, by the nearest-rank method: the p-th percentile is the
 * smallest sample such that at least p % of the samples are less than or equal to it. With 20
 * samples, p99 and max are therefore the same sample; the report gives n with every summary.
 *
 * @param n number of samples
 * @param p50 median
 * @param p90 90th percentile
 * @param p99 99th percentile
 * @param max largest sample
 */
public record Stats(int n, double p50, double p90, double p99, double max) {

  /** Summarises samples (any unit; the result is in the same unit). */
  public static Stats of(double[] samples) {
    if (samples.length == 0) {
      return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }
    double[] s = samples.clone();
    Arrays.sort(s);
    return new Stats(s.length, rank(s, 50), rank(s, 90), rank(s, 99), s[s.length - 1]);
  }

  /** Summarises nanosecond samples as milliseconds. */
  public static Stats ofNanosAsMillis(Collection<Long> nanos) {
    double[] ms = new double[nanos.size()];
    int i = 0;
    for (long v : nanos) {
      ms[i++] = v / 1e6;
    }
    return of(ms);
  }

  /** Nearest rank: the ceil(p/100 * n)-th smallest sample (1-based). */
  static double rank(double[] sorted, double p) {
    int rank = (int) Math.ceil(p / 100.0 * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
  }

  /** e.g. {@code p50 1.2 / p90 3.4 / p99 5.6 / max 7.8 ms (n=200)}. */
  public String format(String unit) {
    return String.format("p50 %s / p90 %s / p99 %s / max %s %s (n=%d)",
        num(p50), num(p90), num(p99), num(max), unit, n);
  }

  static String num(double v) {
    if (Double.isNaN(v)) {
      return "-";
    }
    if (v >= 100) {
      return String.format("%.0f", v);
    }
    if (v >= 10) {
      return String.format("%.1f", v);
    }
    return String.format("%.2f", v);
  }
}
