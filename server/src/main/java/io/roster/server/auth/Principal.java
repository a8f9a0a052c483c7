package io.roster.server.auth;

import io.roster.server.model.RegistryException;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An authenticated identity and its grants, as the auth file says at the moment of the check,
 * and the host it proved itself from (for the audit trail). Immutable.
 *
 * @param name the user's or the token's name in the auth file; empty for {@link #ANONYMOUS}
 * @param expiresAtMillis when the credential that proved it stops being valid ({@link Long#MAX_VALUE}: never)
 * @param passwordStamp when an access token proved it, the stamp of the password its login checked
 *     ({@link Passwords#stamp}): once the user's password is another, the identity ends; null for a
 *     static token (and a token of an earlier build, which carries none)
 * @param from the caller's host, as the transport gives it; empty when not known
 */
public record Principal(String name, List<Grant> grants, long expiresAtMillis, @Nullable String passwordStamp,
    String from) {

  /** Who every caller is when auth is off: no name, and every permission everywhere. */
  public static final Principal ANONYMOUS =
      new Principal("", List.of(new Grant(Permission.ADMIN, Grant.ALL, Grant.ALL)), Long.MAX_VALUE);

  public Principal {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(from, "from");
    grants = List.copyOf(grants);
  }

  /** An identity proved by a credential that is no access token (no password stamp), from no known host. */
  public Principal(String name, List<Grant> grants, long expiresAtMillis) {
    this(name, grants, expiresAtMillis, null, "");
  }

  /** The host of a remote address as the transports give it ({@code /1.2.3.4:5678}, {@code [::1]:5678}). */
  public static String hostOf(String remoteAddress) {
    return Guesses.host(remoteAddress);
  }

  /** The same identity, proved from {@code host}. */
  public Principal from(String host) {
    return host.equals(from) ? this : new Principal(name, grants, expiresAtMillis, passwordStamp, host);
  }

  /** The same identity, valid until {@code millis}. */
  public Principal expiringAt(long millis) {
    return new Principal(name, grants, millis, passwordStamp, from);
  }

  /** Whether this is a named identity (auth is on), not {@link #ANONYMOUS}. */
  public boolean named() {
    return !name.isEmpty();
  }

  /** Whether a grant allows {@code needed} on the service {@code group@@service} of {@code namespace}. */
  public boolean allows(Permission needed, String namespace, String group, String service) {
    for (Grant g : grants) {
      if (g.allows(needed, namespace, group, service)) {
        return true;
      }
    }
    return false;
  }

  /** Whether a grant allows {@code needed} on every service of {@code namespace} ({@code *}: of every namespace). */
  public boolean allowsAll(Permission needed, String namespace) {
    for (Grant g : grants) {
      if (g.allowsAll(needed, namespace)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Refuses unless a grant allows {@code needed} on the service.
   *
   * @throws RegistryException PERMISSION_DENIED naming the identity, the permission and where
   */
  public void check(Permission needed, String namespace, String group, String service) {
    if (!allows(needed, namespace, group, service)) {
      throw denied(needed, "namespace \"" + namespace + "\", service \"" + group + "@@" + service + "\"");
    }
  }

  /**
   * Refuses unless a grant allows {@code needed} on the whole namespace ({@code *}: every namespace).
   *
   * @throws RegistryException PERMISSION_DENIED naming the identity, the permission and where
   */
  public void checkAll(Permission needed, String namespace) {
    if (!allowsAll(needed, namespace)) {
      throw denied(needed, namespace.equals(Grant.ALL) ? "every namespace" : "namespace \"" + namespace + "\"");
    }
  }

  private RegistryException denied(Permission needed, String where) {
    RegistryException e = new RegistryException(RegistryException.Kind.PERMISSION_DENIED, "",
        "\"" + name + "\" lacks permission " + needed.wireName() + " on " + where);
    Audit.refused(this, needed.wireName() + " on " + where, e.getMessage());
    return e;
  }
}
