package io.roster.client.internal;

import io.roster.client.RosterException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One server of the configured list.
 *
 * @param host host name or IP literal (IPv6 without brackets)
 * @param port TCP port
 */
record ServerAddress(String host, int port) {

  /** The client gRPC port used when an entry gives none. */
  static final int DEFAULT_PORT = 9848;

  /**
   * Parses a comma-separated list of {@code host[:port]} entries ({@code [v6]:port} for IPv6),
   * dropping duplicates and keeping the order.
   */
  static List<ServerAddress> parseList(String list) {
    Set<ServerAddress> result = new LinkedHashSet<>();
    for (String raw : list.split(",", -1)) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      result.add(parse(entry));
    }
    if (result.isEmpty()) {
      throw invalid(list);
    }
    return List.copyOf(new ArrayList<>(result));
  }

  /** Parses one {@code host[:port]} or {@code [v6][:port]} entry. */
  static ServerAddress parse(String entry) {
    String host;
    String port = null;
    if (entry.startsWith("[")) {
      int close = entry.indexOf(']');
      if (close < 0) {
        throw invalid(entry);
      }
      host = entry.substring(1, close);
      String rest = entry.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          throw invalid(entry);
        }
        port = rest.substring(1);
      }
    } else {
      int colon = entry.lastIndexOf(':');
      if (colon >= 0 && entry.indexOf(':') != colon) {
        host = entry; // a bare IPv6 literal without a port
      } else if (colon >= 0) {
        host = entry.substring(0, colon);
        port = entry.substring(colon + 1);
      } else {
        host = entry;
      }
    }
    if (host.isEmpty() || host.chars().anyMatch(Character::isWhitespace)) {
      throw invalid(entry);
    }
    int p = DEFAULT_PORT;
    if (port != null) {
      try {
        p = Integer.parseInt(port);
      } catch (NumberFormatException e) {
        throw invalid(entry);
      }
      if (p < 1 || p > 65_535) {
        throw invalid(entry);
      }
    }
    return new ServerAddress(host, p);
  }

  private static RosterException invalid(String value) {
    return new RosterException(RosterException.Code.INVALID_ARGUMENT,
        "serverAddresses: '" + value + "' (expected: host:port[,host:port...] with port 1..65535)",
        "serverAddresses", null);
  }

  @Override
  public String toString() {
    return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
  }
}
