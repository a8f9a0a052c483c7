package io.roster.server.rpc;

import io.roster.proto.v1.DrainSummary;
import io.roster.server.push.AckCollector;

/**
 * The proto side of a drain, shared by the session drain and Admin/DrainInstance: the counts
 * as a {@link DrainSummary}. The timeout rule is {@link io.roster.server.naming.DrainTimeouts}.
 */
final class Drains {

  private Drains() {}

  static DrainSummary toProto(AckCollector.Counts c) {
    return DrainSummary.newBuilder().setNotified(c.notified()).setAcked(c.acked())
        .setTimedOut(c.timedOut()).setDisconnected(c.disconnected()).build();
  }
}
