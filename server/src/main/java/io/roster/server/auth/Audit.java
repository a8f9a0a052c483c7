package io.roster.server.auth;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One INFO line per operator action, on the logger {@code roster.audit}: who (the identity, or
 * {@code anonymous} with auth off), what, on what, and how it ended. Operator actions are rare
 * (holds, settings, drains, log levels); requests of clients never come here, so no load or
 * attack makes it a line per request. Route {@code roster.audit} to a file of its own in
 * logback.xml to keep it apart. Thread-safe.
 */
public final class Audit {

  private static final Logger log = LoggerFactory.getLogger("roster.audit");

  private Audit() {}

  /**
   * Logs one action.
   *
   * @param action the operation, e.g. {@code UpdateInstance}
   * @param target what it acted on, e.g. {@code prod/DEFAULT_GROUP@@orders 10.0.0.1:8080/DEFAULT}
   * @param change what it asked for, e.g. {@code enabled=false}; empty when nothing more to say
   * @param result {@code ok}, or the refusal's message
   */
  public static void log(Principal who, String action, String target, String change, String result) {
    log.info("audit: who={} action={} target={}{} result={}", who.named() ? who.name() : "anonymous", action, target,
        change.isEmpty() ? "" : " change=" + change, result);
  }
}
