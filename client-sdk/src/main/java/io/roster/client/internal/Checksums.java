package io.roster.client.internal;

import io.roster.client.Instance;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The server's checksum of a service's visible state (docs/protocol.md, "Revisions and
 * checksums"), computed here to verify the result of applying a delta push: 32 hex characters
 * of the SHA-256 of the service key, the protect flag and each instance in the order given
 * (the server's: by ip, port and cluster). A list out of that order gives another checksum,
 * which is what a verification wants.
 */
final class Checksums {

  private Checksums() {}

  static String of(ServiceKey service, List<Instance> sorted, boolean protectThresholdReached) {
    StringBuilder sb = new StringBuilder(64 + sorted.size() * 64);
    sb.append(service).append(protectThresholdReached ? "|protected" : "").append('\n');
    for (Instance i : sorted) {
      sb.append(i.ip()).append('|').append(i.port()).append('|').append(i.cluster()).append('|')
          .append(i.weight()).append('|').append(i.healthy()).append('|').append(i.enabled())
          .append('|').append(i.ephemeral());
      for (Map.Entry<String, String> e : i.metadata().entrySet()) { // key-sorted (Instance)
        sb.append('|').append(e.getKey().length()).append(':').append(e.getKey())
            .append('=').append(e.getValue().length()).append(':').append(e.getValue());
      }
      sb.append('\n');
    }
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-256 is required of every JVM", e);
    }
  }
}
