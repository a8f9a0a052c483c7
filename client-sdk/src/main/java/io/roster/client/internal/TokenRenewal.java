package io.roster.client.internal;

import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives an open session the token supplier's new answer without reconnecting (a
 * {@code credentials} frame, same identity), checked at each keepalive tick. Its log lines come
 * from the connection manager's logger. Used only in the client's {@link SerialContext}.
 */
final class TokenRenewal {

  private static final Logger log = LoggerFactory.getLogger(ConnectionManager.class);

  private final Supplier<Request.Hello> hello;
  private final Duration timeout;

  /** @param timeout how long the server has to answer the new token */
  TokenRenewal(Supplier<Request.Hello> hello, Duration timeout) {
    this.hello = hello;
    this.timeout = timeout;
  }

  /**
   * In the context, at each keepalive tick: when the token supplier's answer changed, gives it to
   * the open session {@code s} (a {@code credentials} frame, same identity) instead of reconnecting.
   */
  void renew(Session s) {
    if (!s.supports(Session.FEATURE_CREDENTIALS)) {
      return;
    }
    String now = hello.get().token();
    if (now.equals(s.token())) {
      return;
    }
    s.token(now);
    s.request(new Request.Credentials(now), timeout).whenComplete((answer, failed) -> {
      if (failed == null && !answer.ok()) {
        log.warn("Roster server {} refused the renewed token: {}", s.address, answer.message());
      }
    });
  }
}
