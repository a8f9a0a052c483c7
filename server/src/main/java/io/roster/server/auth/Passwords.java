package io.roster.server.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Password hashes: PBKDF2 with HMAC-SHA256 from the JDK (no dependency; decision 65 says why),
 * a 16-byte random salt per password, stored as {@code pbkdf2-sha256$ITERATIONS$SALT$HASH}
 * (salt and hash in base64). The iteration count is stored with each hash, so raising the default
 * later leaves existing hashes valid.
 *
 * <p>Deliberately slow (tens of milliseconds of CPU per check, docs/benchmarks.md): never call
 * {@link #matches} on a transport thread. Thread-safe.
 */
public final class Passwords {

  /** The iterations of new hashes. */
  public static final int ITERATIONS = 210_000;

  private static final String SCHEME = "pbkdf2-sha256";
  private static final int SALT_BYTES = 16;
  private static final int HASH_BITS = 256;
  private static final SecureRandom RANDOM = new SecureRandom();

  private Passwords() {}

  /** A new hash of {@code password}, with a fresh salt. */
  public static String hash(String password) {
    byte[] salt = new byte[SALT_BYTES];
    RANDOM.nextBytes(salt);
    Base64.Encoder b64 = Base64.getEncoder().withoutPadding();
    return SCHEME + "$" + ITERATIONS + "$" + b64.encodeToString(salt) + "$"
        + b64.encodeToString(derive(password, salt, ITERATIONS));
  }

  /**
   * Checks that {@code stored} is a hash this class writes.
   *
   * @return null when it is, else what is wrong with it
   */
  static @org.jspecify.annotations.Nullable String problem(String stored) {
    String[] parts = stored.split("\\$", -1);
    if (parts.length != 4 || !parts[0].equals(SCHEME)) {
      return "a hash written by `roster-server.jar auth` (" + SCHEME + "$ITERATIONS$SALT$HASH)";
    }
    try {
      int iterations = Integer.parseInt(parts[1]);
      if (iterations < 10_000) {
        return "at least 10000 iterations";
      }
      Base64.getDecoder().decode(parts[2]);
      Base64.getDecoder().decode(parts[3]);
    } catch (IllegalArgumentException e) {
      return SCHEME + "$ITERATIONS$SALT$HASH with a number and base64 salt and hash";
    }
    return null;
  }

  /** Whether {@code password} is the one {@code stored} (a hash {@link #problem} accepts) was made from. */
  public static boolean matches(String password, String stored) {
    String[] parts = stored.split("\\$", -1);
    byte[] salt = Base64.getDecoder().decode(parts[2]);
    byte[] expected = Base64.getDecoder().decode(parts[3]);
    return MessageDigest.isEqual(expected, derive(password, salt, Integer.parseInt(parts[1])));
  }

  private static byte[] derive(String password, byte[] salt, int iterations) {
    PBEKeySpec spec = new PBEKeySpec(password.toCharArray(), salt, iterations, HASH_BITS);
    try {
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(spec).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 is part of every Java 17 runtime", e);
    } finally {
      spec.clearPassword();
    }
  }

  /**
   * A short digest of a stored password hash (12 characters, base64url of the first 72 bits of its
   * SHA-256): what an access token carries to say which password its login checked. Every new
   * hash has a new salt, so setting a password, even to the same one, changes the stamp.
   */
  public static String stamp(String stored) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(stored.getBytes(StandardCharsets.UTF_8));
      return Base64.getUrlEncoder().withoutPadding().encodeToString(java.util.Arrays.copyOf(digest, 9));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }

  /** The SHA-256 of {@code token} in lower-case hex: how the auth file keeps static tokens. */
  public static String sha256(String token) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
      StringBuilder hex = new StringBuilder(64);
      for (byte b : digest) {
        hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
      }
      return hex.toString();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
    }
  }

  /** A new random secret of {@code bytes} bytes, base64url without padding. */
  public static String randomSecret(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }
}
