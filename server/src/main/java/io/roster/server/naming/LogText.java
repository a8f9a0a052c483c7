package io.roster.server.naming;

/**
 * Client-supplied text made safe for a log line: control characters (a newline could forge a
 * line) are escaped and the length is capped, so that a client can neither fake log entries nor
 * flood the log with one field.
 */
public final class LogText {

  public static final int MAX = 128;

  private LogText() {}

  /**
   * Whether {@code c} could break or forge a log line: C0 and C1 control characters, DEL and
   * the Unicode line and paragraph separators.
   */
  public static boolean isControl(char c) {
    return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029';
  }

  /** {@code text} with control characters as {@code \n}, {@code \t} or {@code \u001b}, cut at {@value #MAX}. */
  public static String of(String text) {
    if (text == null) {
      return "";
    }
    int n = Math.min(text.length(), MAX);
    StringBuilder sb = null;
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      boolean control = isControl(c);
      if (control && sb == null) {
        sb = new StringBuilder(n + 16).append(text, 0, i);
      }
      if (sb != null) {
        if (!control) {
          sb.append(c);
        } else if (c == '\n') {
          sb.append("\\n");
        } else if (c == '\r') {
          sb.append("\\r");
        } else if (c == '\t') {
          sb.append("\\t");
        } else {
          sb.append(String.format("\\u%04x", (int) c));
        }
      }
    }
    String safe = sb != null ? sb.toString() : text.substring(0, n);
    return text.length() > MAX ? safe + "...(" + text.length() + " chars)" : safe;
  }
}
