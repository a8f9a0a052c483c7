package io.roster.server.nacos;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.model.RegistryException;
import java.util.concurrent.Semaphore;

/**
 * Nacos's login ({@code POST /nacos/v1/auth/users/login}, which nacos-client 2.x calls, and
 * {@code POST /nacos/v3/auth/user/login}, which 3.x tries first), against the users of the auth
 * file (decision 66). Both take {@code username} (the clients send it in the query string) and
 * {@code password} (in the form body) and answer what the clients read: {@code
 * {"accessToken":"...","tokenTtl":SECONDS,"globalAdmin":BOOL,"username":"..."}}. A wrong
 * password or unknown user is 403, as Nacos answers it.
 *
 * <p>With auth off the login answers 200 with an empty {@code accessToken}, {@code globalAdmin:
 * true} and the configured token lifetime: every caller may do everything, and a client
 * configured with a username keeps working without asking again before that lifetime ends.
 *
 * <p>The password check is slow by design (PBKDF2) and runs one at a time ({@link
 * Authenticator#login}) on the HTTP endpoint's handler threads, and at most {@link #AT_ONCE}
 * of those wait for it, so that logins cannot take every handler thread (429 beyond).
 * Thread-safe.
 */
final class NacosLogin {

  /** The login nacos-client 2.x calls (and 3.x when the v3 one is not there). */
  static final String V1 = "/nacos/v1/auth/users/login";
  /** The login nacos-client 3.x calls first. */
  static final String V3 = "/nacos/v3/auth/user/login";
  /**
   * Logins checked or waiting at once: of the HTTP endpoint's 8 handler threads, two are always
   * left to beats and reads. Applications that start together each log in once (one check takes
   * tens to hundreds of milliseconds, docs/benchmarks.md), so six waiting is a burst, not a steady state.
   */
  static final int AT_ONCE = 6;

  private final Authenticator authenticator;
  private final Semaphore slots = new Semaphore(AT_ONCE);

  NacosLogin(Authenticator authenticator) {
    this.authenticator = authenticator;
  }

  /** Adds both login paths to {@code endpoint}. */
  void routeOn(HttpEndpoint endpoint) {
    endpoint.route(V1, this::login);
    endpoint.route(V3, this::login);
  }

  HttpResponse login(HttpRequest r) {
    if (!r.method().equals("POST")) {
      throw new HttpException(405, r.method() + " " + r.path() + " is not served (expected: POST)");
    }
    String username = r.required("username");
    String password = r.param("password");
    if (password == null) {
      throw HttpException.badParameter("password", null, "the user's password, in the form body");
    }
    if (!authenticator.enabled()) {
      return answer("", authenticator.tokenTtl().toSeconds(), true, username);
    }
    if (!slots.tryAcquire()) {
      throw new HttpException(429, AT_ONCE + " logins are being checked already; try again");
    }
    try {
      Authenticator.Login login = authenticator.login(username, password, r.remoteHost());
      return answer(login.accessToken(), login.ttl().toSeconds(),
          login.principal().allowsAll(Permission.ADMIN, Grant.ALL), login.principal().name());
    } catch (RegistryException e) {
      // Unknown user, wrong password, too many bad ones from this host, or no users at all: Nacos's 403.
      throw new HttpException(403, e.getMessage());
    } finally {
      slots.release();
    }
  }

  private static HttpResponse answer(String token, long ttlSeconds, boolean globalAdmin, String username) {
    ObjectNode o = NacosMapping.JSON.createObjectNode();
    o.put("accessToken", token);
    o.put("tokenTtl", ttlSeconds);
    o.put("globalAdmin", globalAdmin);
    o.put("username", username);
    try {
      return HttpResponse.json(NacosMapping.JSON.writeValueAsString(o));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a tree of plain values always serialises
    }
  }
}
