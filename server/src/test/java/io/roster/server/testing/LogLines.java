package io.roster.server.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** The lines a logger writes while this is open, at {@code level} or above whatever the tests' level. */
public final class LogLines implements AutoCloseable {

  private final Logger logger;
  private final ListAppender<ILoggingEvent> seen = new ListAppender<>();
  private final Level level;

  public LogLines(String loggerName, Level atLeast) {
    logger = (Logger) LoggerFactory.getLogger(loggerName);
    level = logger.getLevel();
    seen.start();
    logger.addAppender(seen);
    logger.setLevel(atLeast);
  }

  public LogLines(Class<?> logger, Level atLeast) {
    this(logger.getName(), atLeast);
  }

  /** The messages so far, formatted. */
  public List<String> lines() {
    return List.copyOf(seen.list).stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(seen);
    logger.setLevel(level);
    seen.stop();
  }
}
