package io.roster.server.auth;

import java.util.Objects;

/**
 * One grant of an identity: a permission on a namespace ({@code *}: every namespace) and,
 * optionally, only on the services a pattern matches. The pattern is a glob ({@code *} matches
 * any run of characters) over {@code group@@service}; a pattern without {@code @@} is matched
 * against the service name in any group. Immutable.
 *
 * @param services {@code *} for every service
 */
public record Grant(Permission permission, String namespace, String services) {

  /** Every namespace, or every service. */
  public static final String ALL = "*";

  public Grant {
    Objects.requireNonNull(permission, "permission");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(services, "services");
  }

  /** Whether this grant allows {@code needed} on the service {@code group@@service} of {@code namespace}. */
  public boolean allows(Permission needed, String namespace, String group, String service) {
    return permission.includes(needed) && covers(namespace) && matches(group, service);
  }

  /** Whether this grant allows {@code needed} on the whole of {@code namespace} (every service in it). */
  public boolean allowsAll(Permission needed, String namespace) {
    return permission.includes(needed) && covers(namespace) && services.equals(ALL);
  }

  private boolean covers(String namespace) {
    return this.namespace.equals(ALL) || this.namespace.equals(namespace);
  }

  private boolean matches(String group, String service) {
    if (services.equals(ALL)) {
      return true;
    }
    return glob(services, services.contains("@@") ? group + "@@" + service : service);
  }

  /** Whether {@code text} matches {@code pattern}, where {@code *} matches any run of characters. */
  static boolean glob(String pattern, String text) {
    int p = 0;
    int t = 0;
    int star = -1;
    int resume = 0;
    while (t < text.length()) {
      if (p < pattern.length() && pattern.charAt(p) == '*') {
        star = p++;
        resume = t;
      } else if (p < pattern.length() && pattern.charAt(p) == text.charAt(t)) {
        p++;
        t++;
      } else if (star >= 0) {
        p = star + 1;
        t = ++resume;
      } else {
        return false;
      }
    }
    while (p < pattern.length() && pattern.charAt(p) == '*') {
      p++;
    }
    return p == pattern.length();
  }
}
