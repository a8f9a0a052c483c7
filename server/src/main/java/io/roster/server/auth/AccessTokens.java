package io.roster.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * The access tokens a login issues: {@code rt1.NAME.EXPIRY.STAMP.MAC}, the user's name (base64url),
 * the expiry in epoch seconds, the stamp of the password the login checked ({@link
 * Passwords#stamp}: a short hash of its stored hash) and an HMAC-SHA256 of all three under the
 * auth file's {@code tokenSecret}. Stateless, so every member that reads the same auth file accepts
 * a token any of them issued; a token says who, until when and under which password, never what it
 * may do (grants are read from the file at each check, so a user removed from the file is refused
 * at once, and a token whose stamp is not the user's password's any more was issued before the
 * password changed). Tokens of earlier builds, {@code rt1.NAME.EXPIRY.MAC}, carry no stamp; and an
 * earlier build reads the name and expiry of these and ignores the stamp, so members of both
 * builds accept each other's tokens during a rolling upgrade (decision 79). Thread-safe.
 */
final class AccessTokens {

  static final String PREFIX = "rt1.";

  private final SecretKeySpec key;

  AccessTokens(byte[] secret) {
    this.key = new SecretKeySpec(secret, "HmacSHA256");
  }

  /** A token for {@code user}, whose password has the stamp {@code stamp}, valid until {@code expiresAtSeconds}. */
  String issue(String user, long expiresAtSeconds, String stamp) {
    String body = PREFIX + b64(user.getBytes(StandardCharsets.UTF_8)) + "." + expiresAtSeconds + "." + stamp;
    return body + "." + b64(mac(body));
  }

  /**
   * A token's claims, when its MAC is right (expiry and stamp not checked here).
   *
   * @param stamp the stamp of the password the login checked; null in a token of an earlier build
   */
  record Claims(String user, long expiresAtSeconds, @Nullable String stamp) {}

  /** The claims of {@code token}, or null when it is not one of these tokens or its MAC is wrong. */
  @Nullable Claims verify(String token) {
    int macAt = token.lastIndexOf('.');
    if (!token.startsWith(PREFIX) || macAt < PREFIX.length()) {
      return null;
    }
    String body = token.substring(0, macAt);
    byte[] given;
    try {
      given = Base64.getUrlDecoder().decode(token.substring(macAt + 1));
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (!MessageDigest.isEqual(given, mac(body))) {
      return null;
    }
    String[] parts = body.substring(PREFIX.length()).split("\\.", -1);
    if (parts.length != 2 && parts.length != 3) {
      return null;
    }
    try {
      return new Claims(new String(Base64.getUrlDecoder().decode(parts[0]), StandardCharsets.UTF_8),
          Long.parseLong(parts[1]), parts.length == 3 ? parts[2] : null);
    } catch (RuntimeException e) {
      return null; // a MAC over a body this class did not write: not a token of ours
    }
  }

  private byte[] mac(String body) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return mac.doFinal(body.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
    }
  }

  private static String b64(byte[] bytes) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
