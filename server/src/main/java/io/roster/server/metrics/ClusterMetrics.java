package io.roster.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.roster.server.cluster.ClusterNode;
import io.roster.server.cluster.Members;
import java.util.function.LongSupplier;

/**
 * A cluster member's metrics (docs/observability.md): leadership, members, the log's progress and
 * snapshots, read at each scrape, and the commit histogram, observed as writes are applied.
 * Stateless; {@link ServerMetrics} registers them once.
 */
@SuppressWarnings("LongDoubleConversion") // counts become Prometheus's doubles: exact up to 2^53
final class ClusterMetrics {

  private ClusterMetrics() {}

  /** Registers {@code cluster}'s metrics in {@code prometheus}; {@code now} is the wall clock, in microseconds. */
  static void register(PrometheusRegistry prometheus, ClusterNode cluster, LongSupplier now) {
    GaugeWithCallback.builder().name("roster_cluster_leader").help("1 on the member that leads the log now, else 0")
        .callback(cb -> cb.call(cluster.isLeader() ? 1 : 0)).register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_has_leader").help("1 while this member knows a leader, else 0")
        .callback(cb -> cb.call(cluster.hasLeader() ? 1 : 0)).register(prometheus);
    CounterWithCallback.builder().name("roster_cluster_leader_changes_total")
        .help("Leader changes this member has seen since it started")
        .callback(cb -> cb.call(cluster.leaderChanges())).register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_term").help("The Raft term this member is in")
        .callback(cb -> cb.call(cluster.term())).register(prometheus);
    CounterWithCallback.builder().name("roster_cluster_proposals_failed_total")
        .help("Changes sent to this member that failed before reaching the log, by reason (unwritable: this member "
            + "cannot write; queue_full: too many waiting; not_taken: the log did not take them; stopped)")
        .labelNames("reason").callback(cb -> cluster.forEachFailedProposal((reason, n) -> cb.call(n, reason)))
        .register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_member_up")
        .help("1 when this member sees the member as up (the log has not marked it down), else 0")
        .labelNames("member").callback(cb -> {
          for (Members.MemberView m : cluster.members()) {
            cb.call(m.down() ? 0 : 1, m.id());
          }
        }).register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_member_lag_entries")
        .help("Log entries the member's commit index is behind the most advanced one this member knows of")
        .labelNames("member").callback(cb -> {
          for (Members.MemberView m : cluster.members()) {
            if (m.lag() >= 0) {
              cb.call(m.lag(), m.id());
            }
          }
        }).register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_applied_index").help("The last log index applied here")
        .callback(cb -> cb.call(cluster.appliedIndex())).register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_log_entries")
        .help("Log entries applied here since the newest snapshot").callback(cb -> cb.call(cluster.entriesSinceSnapshot()))
        .register(prometheus);
    GaugeWithCallback.builder().name("roster_cluster_snapshot_age_seconds")
        .help("Seconds since the newest snapshot was written (absent while there is none)").callback(cb -> {
          long at = cluster.snapshotMillis();
          if (at >= 0) {
            cb.call(Math.max(0, now.getAsLong() / 1000 - at) / 1000.0);
          }
        }).register(prometheus);
    Histogram commit = Histogram.builder().name("roster_cluster_commit_seconds")
        .help("From sending this member's writes to the log to applying them here")
        .classicOnly().classicUpperBounds(ServerMetrics.LATENCY_BUCKETS).register(prometheus);
    cluster.onCommitted(micros -> commit.observe(micros / 1e6));
  }
}
