package io.roster.server;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.rolling.RollingFileAppender;
import ch.qos.logback.core.rolling.SizeAndTimeBasedRollingPolicy;
import ch.qos.logback.core.util.FileSize;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Adds a size-capped rolling file to the console logging of logback.xml when a log directory
 * is configured: roster.log, rolled daily or at 20 MB, at most 200 MB kept.
 */
final class LogSetup {

  private LogSetup() {}

  static void configure(@Nullable Path logDir) {
    routeJulToSlf4j();
    if (logDir == null) {
      return;
    }
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(ctx);
    encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n%ex");
    encoder.start();

    RollingFileAppender<ILoggingEvent> file = new RollingFileAppender<>();
    file.setContext(ctx);
    file.setName("FILE");
    file.setFile(logDir.resolve("roster.log").toString());
    SizeAndTimeBasedRollingPolicy<ILoggingEvent> policy = new SizeAndTimeBasedRollingPolicy<>();
    policy.setContext(ctx);
    policy.setParent(file);
    policy.setFileNamePattern(logDir.resolve("roster.%d{yyyy-MM-dd}.%i.log.gz").toString());
    policy.setMaxFileSize(FileSize.valueOf("20MB"));
    policy.setMaxHistory(14);
    policy.setTotalSizeCap(FileSize.valueOf("200MB"));
    policy.start();
    file.setRollingPolicy(policy);
    file.setEncoder(encoder);
    file.start();
    // Never block a logging thread (they include gRPC event loops): see logback.xml.
    AsyncAppender async = new AsyncAppender();
    async.setContext(ctx);
    async.setName("ASYNC_FILE");
    async.setQueueSize(4096);
    async.setDiscardingThreshold(0);
    async.setNeverBlock(true);
    async.addAppender(file);
    async.start();
    ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(async);
  }

  /**
   * gRPC and Netty log through java.util.logging, which by default prints to stderr with its
   * own format, past logback's levels, rolling files and rate limits (a client's stream errors
   * printed hundreds of stack traces that way). From here on JUL records go to SLF4J.
   */
  static void routeJulToSlf4j() {
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
  }

  /** Flushes and stops logging (the async appenders' queues); call last, on exit. */
  static void shutdown() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx) {
      ctx.stop();
    }
  }
}
