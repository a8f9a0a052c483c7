package io.roster.server.model;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** Validation of names, addresses and metadata: the limits of docs/protocol.md ("Limits") in one place. */
public final class Names {

  public static final String DEFAULT_NAMESPACE = "public";
  public static final String DEFAULT_GROUP = "DEFAULT_GROUP";
  public static final String DEFAULT_CLUSTER = "DEFAULT";

  public static final int MAX_NAMESPACE = 128;
  public static final int MAX_GROUP = 128;
  public static final int MAX_SERVICE = 512;
  public static final int MAX_CLUSTER = 64;
  public static final int MAX_IP = 128;
  public static final int MAX_METADATA_ENTRIES = 64;
  public static final int MAX_METADATA_KEY = 128;
  public static final int MAX_METADATA_VALUE = 1024;
  public static final int MAX_METADATA_BYTES = 16 * 1024;
  public static final double MAX_WEIGHT = 10_000;

  private Names() {}

  /** Namespace and group: letters, digits and {@code _ . : -}. */
  public static void checkSimpleName(String field, String value, int max) {
    checkName(field, value, max, false);
  }

  /** Service names also allow {@code /} but never {@code @@} (the group separator). */
  static void checkServiceName(String field, String value) {
    checkName(field, value, MAX_SERVICE, true);
    if (value.contains("@@")) {
      throw RegistryException.invalid(field, value, "no \"@@\" in a service name");
    }
  }

  private static void checkName(String field, String value, int max, boolean slash) {
    String charset = slash ? "1.." + max + " characters of [A-Za-z0-9_.:/@-]" : "1.." + max + " characters of [A-Za-z0-9_.:-]";
    if (value == null || value.isEmpty() || value.length() > max) {
      throw RegistryException.invalid(field, value == null ? "" : value, charset);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '_' || c == '.' || c == ':' || c == '-' || (slash && (c == '/' || c == '@'));
      if (!ok) {
        throw RegistryException.invalid(field, value, charset);
      }
    }
  }

  /** Validates a cluster name and returns it. */
  public static String cluster(String field, String value) {
    checkCluster(field, value);
    return value;
  }

  static void checkCluster(String field, String value) {
    if (value.isEmpty() || value.length() > MAX_CLUSTER) {
      throw RegistryException.invalid(field, value, "1.." + MAX_CLUSTER + " characters of [A-Za-z0-9_.-]");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '_' || c == '.' || c == '-')) {
        throw RegistryException.invalid(field, value, "1.." + MAX_CLUSTER + " characters of [A-Za-z0-9_.-]");
      }
    }
  }

  /** An IPv4/IPv6 literal or a host name: no spaces, no control characters, bounded. */
  static void checkIp(String field, String value) {
    String expected = "an IP address or host name of 1.." + MAX_IP + " characters";
    if (value == null || value.isEmpty() || value.length() > MAX_IP) {
      throw RegistryException.invalid(field, value == null ? "" : value, expected);
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
          || c == '.' || c == '-' || c == ':' || c == '_' || c == '%' || c == '[' || c == ']';
      if (!ok) {
        throw RegistryException.invalid(field, value, expected);
      }
    }
  }

  /** Metadata (and labels): bounded entries, key and value lengths, and total size. */
  public static void checkMetadata(String field, Map<String, String> metadata) {
    if (metadata.size() > MAX_METADATA_ENTRIES) {
      throw RegistryException.invalid(field, RegistryException.described(metadata.size() + " entries"), "at most " + MAX_METADATA_ENTRIES + " entries");
    }
    long bytes = 0;
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      String key = e.getKey();
      if (key.isEmpty() || key.length() > MAX_METADATA_KEY) {
        throw RegistryException.invalid(field + " key", key, "1.." + MAX_METADATA_KEY + " characters");
      }
      if (e.getValue().length() > MAX_METADATA_VALUE) {
        throw RegistryException.invalid(field + "[" + key + "]", RegistryException.described(e.getValue().length() + " characters"),
            "at most " + MAX_METADATA_VALUE + " characters");
      }
      bytes += key.getBytes(StandardCharsets.UTF_8).length + e.getValue().getBytes(StandardCharsets.UTF_8).length;
    }
    if (bytes > MAX_METADATA_BYTES) {
      throw RegistryException.invalid(field, RegistryException.described(bytes + " bytes of keys and values (UTF-8)"),
          "at most " + MAX_METADATA_BYTES + " bytes (16 KiB) in total");
    }
  }
}
