package io.roster.server;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * gRPC's own logging (java.util.logging) goes through logback, not straight to stderr, and a
 * client cannot repeat a warning without bound (decision 19).
 */
class LoggingTest {

  private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
  private final ListAppender<ILoggingEvent> seen = new ListAppender<>();

  @AfterEach
  void detach() {
    seen.stop();
    context.getLoggerList().forEach(l -> l.detachAppender(seen));
  }

  private Logger capture(String name) {
    seen.setContext(context);
    seen.start();
    Logger logger = context.getLogger(name);
    logger.setLevel(Level.INFO);
    logger.addAppender(seen);
    return logger;
  }

  @Test
  void javaUtilLoggingReachesLogback() {
    capture("io.grpc.netty.test");
    LogSetup.routeJulToSlf4j();
    java.util.logging.Logger.getLogger("io.grpc.netty.test").warning("Stream Error");
    assertThat(seen.list).extracting(ILoggingEvent::getFormattedMessage).containsExactly("Stream Error");
  }

  @Test
  void aRepeatedWarningIsLoggedFiveTimesPerWindowThenCounted() {
    Logger logger = capture("io.roster.test.repeats");
    RepeatedWarningFilter filter = new RepeatedWarningFilter();
    AtomicLong now = new AtomicLong();
    filter.clock(now::get);
    filter.setContext(context);
    filter.start();
    context.addTurboFilter(filter);
    try {
      for (int i = 0; i < 1000; i++) {
        logger.warn("bad frame from {}", "10.0.0." + i);
      }
      logger.info("an info line is never limited");
      assertThat(seen.list).hasSize(6);

      now.addAndGet(TimeUnit.SECONDS.toNanos(11));
      logger.warn("bad frame from {}", "10.0.0.1");
      assertThat(seen.list).extracting(ILoggingEvent::getFormattedMessage).endsWith(
          "995 more like the next one were suppressed in the last 10 s", "bad frame from 10.0.0.1");
    } finally {
      context.getTurboFilterList().remove(filter);
    }
  }
}
