package io.roster.server.testing;

import ch.qos.logback.classic.Level;
import java.util.List;

/** The lines written on {@code roster.audit} while it is open (at INFO, whatever the tests' level). */
public final class AuditLines implements AutoCloseable {

  private final LogLines lines = new LogLines("roster.audit", Level.INFO);

  /** The messages so far, formatted. */
  public List<String> lines() {
    return lines.lines();
  }

  @Override
  public void close() {
    lines.close();
  }
}
