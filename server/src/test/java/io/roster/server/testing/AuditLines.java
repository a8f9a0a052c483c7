package io.roster.server.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** The lines written on {@code roster.audit} while it is open (at INFO, whatever the tests' level). */
public final class AuditLines implements AutoCloseable {

  private final Logger logger = (Logger) LoggerFactory.getLogger("roster.audit");
  private final ListAppender<ILoggingEvent> seen = new ListAppender<>();
  private final Level level = logger.getLevel();

  public AuditLines() {
    seen.start();
    logger.addAppender(seen);
    logger.setLevel(Level.INFO);
  }

  /** The messages so far, formatted. */
  public List<String> lines() {
    return seen.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(seen);
    logger.setLevel(level);
    seen.stop();
  }
}
