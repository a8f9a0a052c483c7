package io.roster.server;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Credentials never reach the log, whoever writes the line (Roster, Jetty, gRPC, Ratis): the
 * message and the exception text of every event the server's layout writes go through {@link
 * #redact}, which replaces the value of an {@code accessToken}, {@code password}, {@code token} or
 * {@code tokenSecret} parameter or JSON field, of an {@code Authorization: Bearer} header, and
 * anything shaped like a Roster token ({@code rst_…}, and the signature of {@code rt1.…}) with
 * {@code ***} (decision 82). Roster's own code does not log request targets, query strings or
 * bodies; this is the net under that rule. {@code logback.xml} puts {@link Message} in place of
 * {@code %msg} and {@link Exceptions} of {@code %ex}, for the console and the files of {@code
 * --log-dir} alike.
 *
 * <p>Thread-safe: stateless.
 */
public final class SecretRedaction {

  private static final Pattern SECRETS = Pattern.compile(
      // A query or form parameter: accessToken=…, password=… (up to the next separator).
      "(?i)((?:access_?token|password|token|token_?secret|secret)=)[^&\\s\"',;)\\]}]+"
          // A JSON field: "accessToken":"…".
          + "|(?i)(\"(?:access_?token|password|token|token_?secret)\"\\s*:\\s*\")[^\"]*"
          // An Authorization header or its value.
          + "|(?i)(bearer\\s+)[^\\s\"',;]+"
          // A static token, wherever it stands.
          + "|(rst_)[A-Za-z0-9_-]+"
          // An access token: its user and expiry stay, its signature goes.
          + "|(rt1\\.[^.\\s]{1,256}\\.[0-9]{1,20}\\.)[A-Za-z0-9_-]+");

  /** What stands in for a secret. */
  public static final String MASK = "***";

  private SecretRedaction() {}

  /** {@code text} with every credential it holds replaced by {@link #MASK}; the same string when it holds none. */
  public static String redact(String text) {
    Matcher m = SECRETS.matcher(text);
    if (!m.find()) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    do {
      String kept = "";
      for (int g = 1; g <= m.groupCount(); g++) {
        String prefix = m.group(g);
        if (prefix != null) {
          kept = prefix;
          break;
        }
      }
      m.appendReplacement(out, Matcher.quoteReplacement(kept + MASK));
    } while (m.find());
    m.appendTail(out);
    return out.toString();
  }

  /** {@code %msg}, redacted. */
  public static final class Message extends MessageConverter {
    @Override
    public String convert(ILoggingEvent event) {
      return redact(super.convert(event));
    }
  }

  /** {@code %ex}, redacted: exception messages may quote what they failed on. */
  public static final class Exceptions extends ThrowableProxyConverter {
    @Override
    protected String throwableProxyToString(IThrowableProxy proxy) {
      return redact(super.throwableProxyToString(proxy));
    }
  }
}
