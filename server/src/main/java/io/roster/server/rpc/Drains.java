package io.roster.server.rpc;

import io.roster.proto.v1.DrainSummary;
import io.roster.server.model.RegistryException;
import io.roster.server.push.AckCollector;
import java.time.Duration;

/** What the session drain and Admin/DrainInstance share: the timeout rule and the counts. */
final class Drains {

  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
  static final long MAX_TIMEOUT_MS = 60_000;

  private Drains() {}

  /** The wait for acks: 0 means the default, at most a minute. */
  static Duration timeout(String field, long timeoutMs) {
    if (timeoutMs < 0 || timeoutMs > MAX_TIMEOUT_MS) {
      throw RegistryException.invalid(field, RegistryException.described(Long.toUnsignedString(timeoutMs)),
          "0.." + MAX_TIMEOUT_MS + " ms (0 means " + DEFAULT_TIMEOUT.toMillis() + ")");
    }
    return timeoutMs == 0 ? DEFAULT_TIMEOUT : Duration.ofMillis(timeoutMs);
  }

  static DrainSummary toProto(AckCollector.Counts c) {
    return DrainSummary.newBuilder().setNotified(c.notified()).setAcked(c.acked())
        .setTimedOut(c.timedOut()).setDisconnected(c.disconnected()).build();
  }
}
