package io.roster.server.naming;

import io.roster.server.model.RegistryException;
import java.time.Duration;

/**
 * The drain timeout rule that the session drain and Admin/DrainInstance share, whatever the
 * transport: 0 means the default, at most a minute.
 */
public final class DrainTimeouts {

  /** The wait when a drain asks for 0. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
  /** The longest wait a drain may ask for, in milliseconds. */
  public static final long MAX_TIMEOUT_MS = 60_000;

  private DrainTimeouts() {}

  /**
   * The wait for acks: 0 means the default, at most a minute.
   *
   * @param field the request field named in the error
   * @throws RegistryException INVALID_ARGUMENT when {@code timeoutMs} is negative or above the maximum
   */
  public static Duration timeout(String field, long timeoutMs) {
    if (timeoutMs < 0 || timeoutMs > MAX_TIMEOUT_MS) {
      throw RegistryException.invalid(field, RegistryException.described(Long.toUnsignedString(timeoutMs)),
          "0.." + MAX_TIMEOUT_MS + " ms (0 means " + DEFAULT_TIMEOUT.toMillis() + ")");
    }
    return timeoutMs == 0 ? DEFAULT_TIMEOUT : Duration.ofMillis(timeoutMs);
  }
}
