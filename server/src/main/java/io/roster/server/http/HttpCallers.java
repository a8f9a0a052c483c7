package io.roster.server.http;

import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import org.jspecify.annotations.Nullable;

/**
 * Who an HTTP request's caller is, and whether it may do what the request asks (decision 66),
 * for every API on the HTTP port:
 * the {@code accessToken} parameter (query string or form body, as Nacos clients send it) or an
 * {@code Authorization: Bearer TOKEN} header (for curl) or, without either, the client certificate
 * the connection's TLS handshake verified (decision 80), checked by the {@link Authenticator}
 * before anything changes. A refusal is 403, its body naming why, the permission and where
 * (namespace, and service when there is one). With auth off every caller may do everything.
 *
 * <p>Thread-safe (stateless beyond the authenticator).
 */
public final class HttpCallers {

  /** The parameter Nacos clients carry their access token in. */
  public static final String ACCESS_TOKEN = "accessToken";


  private final Authenticator authenticator;

  public HttpCallers(Authenticator authenticator) {
    this.authenticator = authenticator;
  }

  /**
   * Refuses (403) unless the caller may do {@code needed} on {@code service}.
   *
   * @return who the caller is ({@link Principal#ANONYMOUS} with auth off)
   */
  public Principal check(HttpRequest r, Permission needed, ServiceKey service) {
    String where = "namespace \"" + service.namespace() + "\", service \"" + service.groupedName() + "\"";
    Principal p = authenticate(r, needed, where);
    try {
      p.check(needed, service.namespace(), service.group(), service.name());
    } catch (RegistryException e) {
      throw new HttpException(403, e.getMessage());
    }
    return p;
  }

  /**
   * Refuses (403) unless the caller may do {@code needed} on every service of {@code namespace}
   * ({@link Grant#ALL}: of every namespace, what the server-wide routes ask).
   */
  public Principal checkAll(HttpRequest r, Permission needed, String namespace) {
    String where = namespace.equals(Grant.ALL) ? "every namespace" : "namespace \"" + namespace + "\"";
    Principal p = authenticate(r, needed, where);
    try {
      p.checkAll(needed, namespace);
    } catch (RegistryException e) {
      throw new HttpException(403, e.getMessage());
    }
    return p;
  }

  /**
   * Who the caller is, whatever it may do ({@link Principal#ANONYMOUS} with auth off).
   *
   * @throws HttpException 403 when the request proves no identity
   */
  public Principal who(HttpRequest r) {
    return authenticate(r, Permission.READ, "anything");
  }

  private Principal authenticate(HttpRequest r, Permission needed, String where) {
    if (!authenticator.enabled()) {
      return Principal.ANONYMOUS.from(r.remoteHost());
    }
    try {
      return authenticator.authenticate(token(r), r.peerCertificates(), r.remoteHost(), ACCESS_TOKEN);
    } catch (RegistryException e) {
      throw new HttpException(403, e.getMessage() + "; this request needs permission " + needed.wireName() + " on "
          + where);
    }
  }

  /** The request's token: {@code accessToken}, else the token of {@code Authorization: Bearer TOKEN}. */
  public static @Nullable String token(HttpRequest r) {
    String param = r.param(ACCESS_TOKEN);
    if (param != null && !param.isEmpty()) {
      return param;
    }
    return Authenticator.bearer(r.authorization());
  }
}
