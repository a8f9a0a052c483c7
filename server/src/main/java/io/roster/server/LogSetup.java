package io.roster.server;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.rolling.RollingFileAppender;
import ch.qos.logback.core.rolling.SizeAndTimeBasedRollingPolicy;
import ch.qos.logback.core.util.FileSize;
import java.nio.file.Path;
import io.roster.server.auth.Audit;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Adds size-capped rolling files to the console logging of logback.xml: with a log directory,
 * roster.log there, rolled daily or at 20 MB, at most 200 MB kept; and the audit trail's own file
 * (audit.log in the log directory, or {@code --audit-log}), rolled daily or at 10 MB, at most 100
 * MB kept. The audit trail's logger is pinned at INFO, so that no level set on the root or a
 * parent silences it.
 */
final class LogSetup {

  private LogSetup() {}

  static void configure(@Nullable Path logDir, @Nullable Path auditLog) {
    routeJulToSlf4j();
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    ctx.getLogger(Audit.LOGGER).setLevel(Level.INFO);
    if (logDir != null) {
      ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(rollingFile(ctx, "FILE", logDir.resolve("roster.log"),
          logDir.resolve("roster.%d{yyyy-MM-dd}.%i.log.gz"), "20MB", "200MB"));
    }
    if (auditLog != null) {
      Path dir = java.util.Objects.requireNonNull(auditLog.toAbsolutePath().getParent(), "an absolute path has a parent");
      String name = auditLog.getFileName().toString().replaceFirst("\\.log$", "");
      ctx.getLogger(Audit.LOGGER).addAppender(rollingFile(ctx, "AUDIT_FILE", auditLog,
          dir.resolve(name + ".%d{yyyy-MM-dd}.%i.log.gz"), "10MB", "100MB"));
    }
  }

  /** A size-capped rolling file behind a queue that never blocks the logging thread. */
  private static AsyncAppender rollingFile(LoggerContext ctx, String name, Path file, Path rolled, String maxFile,
      String total) {
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(ctx);
    encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%n%ex");
    encoder.start();

    RollingFileAppender<ILoggingEvent> appender = new RollingFileAppender<>();
    appender.setContext(ctx);
    appender.setName(name);
    appender.setFile(file.toString());
    SizeAndTimeBasedRollingPolicy<ILoggingEvent> policy = new SizeAndTimeBasedRollingPolicy<>();
    policy.setContext(ctx);
    policy.setParent(appender);
    policy.setFileNamePattern(rolled.toString());
    policy.setMaxFileSize(FileSize.valueOf(maxFile));
    policy.setMaxHistory(14);
    policy.setTotalSizeCap(FileSize.valueOf(total));
    policy.start();
    appender.setRollingPolicy(policy);
    appender.setEncoder(encoder);
    appender.start();
    // Never block a logging thread (they include gRPC event loops): see logback.xml.
    AsyncAppender async = new AsyncAppender();
    async.setContext(ctx);
    async.setName("ASYNC_" + name);
    async.setQueueSize(4096);
    async.setDiscardingThreshold(0);
    async.setNeverBlock(true);
    async.addAppender(appender);
    async.start();
    return async;
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
