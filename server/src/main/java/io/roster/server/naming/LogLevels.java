package io.roster.server.naming;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import io.roster.server.auth.Audit;
import io.roster.server.model.RegistryException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * The server's log levels at runtime, whatever the API: the HTTP {@code PUT /operator/log} and
 * {@code Admin/SetLogLevel} set one logger's level, {@code Admin/GetLogLevels} lists them. Only
 * loggers that exist can be set (a request must not create loggers: each one lives for good);
 * {@code ROOT} is the root logger. A level lasts until the next change or a restart. The audit
 * trail's logger ({@link Audit#LOGGER}) is not theirs to change: it stays at INFO, and a level of
 * the root or of {@code roster} does not reach it.
 */
public final class LogLevels {

  /** What an API calls its fields, for the errors that name them. */
  public record Fields(String logger, String level) {}

  /** One logger: its own level (empty: it inherits) and the level in effect. */
  public record LoggerLevel(String name, String level, String effectiveLevel) {}

  private LogLevels() {}

  /**
   * Sets {@code loggerName}'s level.
   *
   * @return the logger as it is now
   * @throws RegistryException INVALID_ARGUMENT naming the field, the value and what is expected;
   *     FAILED_PRECONDITION when the server does not log with logback
   */
  public static LoggerLevel set(Fields fields, String loggerName, String levelText) {
    Level level = Level.toLevel(levelText.trim(), null);
    if (level == null) {
      throw RegistryException.invalid(fields.level(), levelText, "TRACE, DEBUG, INFO, WARN, ERROR or OFF");
    }
    LoggerContext context = context();
    boolean root = loggerName.equalsIgnoreCase(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Logger logger = root ? context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME) : context.exists(loggerName);
    if (logger == null) {
      throw RegistryException.invalid(fields.logger(), loggerName, "ROOT or a logger the server has, e.g. io.roster.server");
    }
    if (logger.getName().equals(Audit.LOGGER) || logger.getName().startsWith(Audit.LOGGER + ".")) {
      throw RegistryException.invalid(fields.logger(), loggerName, "a logger other than the audit trail's, "
          + Audit.LOGGER + ", which is always on at INFO (docs/security.md, Audit)");
    }
    logger.setLevel(level);
    return new LoggerLevel(logger.getName(), level.toString(), logger.getEffectiveLevel().toString());
  }

  /** The loggers whose names start with {@code prefix} (all for empty), in name order. */
  public static List<LoggerLevel> list(String prefix) {
    List<LoggerLevel> out = new ArrayList<>();
    for (Logger l : context().getLoggerList()) {
      if (l.getName().startsWith(prefix)) {
        @Nullable Level own = l.getLevel();
        out.add(new LoggerLevel(l.getName(), own == null ? "" : own.toString(), l.getEffectiveLevel().toString()));
      }
    }
    return out;
  }

  private static LoggerContext context() {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "",
          "log levels can only be changed with logback");
    }
    return context;
  }
}
