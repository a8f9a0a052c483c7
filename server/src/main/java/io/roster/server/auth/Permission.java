package io.roster.server.auth;

import java.util.Locale;

/**
 * What a grant lets an identity do in a namespace. Each permission includes the ones before it:
 * {@link #ADMIN} can write and read, {@link #WRITE} can read.
 */
public enum Permission {
  /** Query, subscribe, watch, list services. */
  READ,
  /** Register, deregister, drain one's own instances. */
  WRITE,
  /** Change any instance or service (UpdateInstance, UpdateService, DrainInstance); on {@code *}, also the server's
   * connections, members and log levels. */
  ADMIN;

  /** Whether holding this permission allows {@code needed}. */
  public boolean includes(Permission needed) {
    return compareTo(needed) >= 0;
  }

  /** {@code read}, {@code write} or {@code admin}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The permission named {@code value} ({@code read}, {@code write}, {@code admin}), or null. */
  static @org.jspecify.annotations.Nullable Permission named(String value) {
    for (Permission p : values()) {
      if (p.wireName().equals(value)) {
        return p;
      }
    }
    return null;
  }
}
