package io.roster.server.model;

import java.util.Map;

/**
 * The size of values in their wire form (protobuf, as {@code roster.v1} encodes them), computed
 * in plain Java so that the registry can account for a service's bytes without depending on
 * the generated code. Sizes are exact for what the server writes; {@code WireSizeTest} in the
 * rpc tests checks them against the generated messages.
 */
public final class WireSize {

  private WireSize() {}

  /**
   * Bytes one instance adds to a {@code ServiceInfo}: the {@code Instance} message with every
   * field the server sets, plus its tag and length prefix as an element of
   * {@code ServiceInfo.instances}.
   */
  public static int ofInstanceInList(Instance i) {
    int body = ofInstance(i);
    return 1 + varint(body) + body;
  }

  /** Bytes of the {@code Instance} message as the server writes it (weight and enabled set). */
  public static int ofInstance(Instance i) {
    int n = string(i.ip()) + 1 + varint(i.port()) // ip = 1, port = 2
        + 1 + 8                                        // weight = 3 (optional: always written)
        + (i.healthy() ? 2 : 0)                        // healthy = 4
        + 2                                            // enabled = 5 (optional: always written)
        + (i.ephemeral() ? 2 : 0)                      // ephemeral = 6
        + string(i.cluster())                          // cluster = 7
        + string(i.instanceId());                      // instance_id = 9
    for (Map.Entry<String, String> e : i.metadata().entrySet()) {
      // A map entry writes its key (1) and value (2) even when empty.
      int entry = stringAlways(e.getKey()) + stringAlways(e.getValue());
      n += 1 + varint(entry) + entry;                        // metadata = 8
    }
    return n;
  }

  /** A non-empty string field with a one-byte tag (empty strings are not written). */
  private static int string(String s) {
    if (s.isEmpty()) {
      return 0;
    }
    return stringAlways(s);
  }

  private static int stringAlways(String s) {
    int len = utf8Length(s);
    return 1 + varint(len) + len;
  }

  /** Bytes of a non-negative int as a varint. */
  static int varint(int v) {
    if (v < 0) {
      return 10;
    }
    int n = 1;
    while (v >= 0x80) {
      v >>>= 7;
      n++;
    }
    return n;
  }

  /** UTF-8 length without encoding. */
  static int utf8Length(String s) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }
}
