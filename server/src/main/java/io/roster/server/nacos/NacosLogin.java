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
import java.util.concurrent.CompletableFuture;

/**
 * Nacos's login ({@code POST /nacos/v1/auth/users/login}, which nacos-client 2.x calls, its older
 * twin {@code POST /nacos/v1/auth/login}, which Nacos serves too, and {@code POST
 * /nacos/v3/auth/user/login}, which 3.x tries first), against the users of the auth file
 * (decision 66). All take {@code username} (the clients send it in the query string) and {@code
 * password} (in the form body) and answer what the clients read: {@code
 * {"accessToken":"...","tokenTtl":SECONDS,"globalAdmin":BOOL,"username":"..."}}. A wrong password
 * or unknown user is 403 with a text body, as Nacos answers it, which nacos-client logs as {@code
 * login failed}.
 *
 * <p>With auth off the login answers 200 with an empty {@code accessToken}, {@code globalAdmin:
 * true} and the configured token lifetime: every caller may do everything, and a client
 * configured with a username keeps working without asking again before that lifetime ends.
 *
 * <p>The password check is slow by design (PBKDF2): it runs on the authenticator's own thread
 * ({@link Authenticator#login}) and the answer is written when it is done, so a login holds no
 * HTTP handler thread while it waits (decision 79). A login refused unchecked (too many failed
 * logins of that user or from that host, or too many waiting) is 429 with {@code Retry-After}.
 * Thread-safe.
 */
final class NacosLogin {

  /** The login nacos-client 2.x calls (and 3.x when the v3 one is not there). */
  static final String V1 = "/nacos/v1/auth/users/login";
  /** The same login at the path Nacos also serves it on. */
  static final String V1_SHORT = "/nacos/v1/auth/login";
  /** The login nacos-client 3.x calls first. */
  static final String V3 = "/nacos/v3/auth/user/login";

  private final Authenticator authenticator;

  NacosLogin(Authenticator authenticator) {
    this.authenticator = authenticator;
  }

  /** Adds the login paths to {@code endpoint}. */
  void routeOn(HttpEndpoint endpoint) {
    endpoint.routeAsync(V1, this::login);
    endpoint.routeAsync(V1_SHORT, this::login);
    endpoint.routeAsync(V3, this::login);
  }

  CompletableFuture<HttpResponse> login(HttpRequest r) {
    if (!r.method().equals("POST")) {
      throw new HttpException(405, r.method() + " " + r.path() + " is not served (expected: POST)");
    }
    String username = r.required("username");
    String password = r.param("password");
    if (password == null) {
      throw HttpException.badParameter("password", null, "the user's password, in the form body");
    }
    if (!authenticator.enabled()) {
      return CompletableFuture.completedFuture(answer("", authenticator.tokenTtl().toSeconds(), true, username));
    }
    return authenticator.login(username, password, r.remoteHost()).thenApply(NacosLogin::answer);
  }

  private static HttpResponse answer(Authenticator.LoginResult result) {
    if (result instanceof Authenticator.Login login) {
      return answer(login.accessToken(), login.ttl().toSeconds(),
          login.principal().allowsAll(Permission.ADMIN, Grant.ALL), login.principal().name());
    }
    if (result instanceof Authenticator.Throttled throttled) {
      return HttpResponse.text(429, throttled.message())
          .withHeader("Retry-After", Long.toString(throttled.retryAfter().toSeconds()));
    }
    if (result instanceof Authenticator.Unavailable unavailable) {
      return HttpResponse.text(503, unavailable.message());
    }
    // Unknown user, wrong password, or no users at all: Nacos's 403, its reason as text.
    return HttpResponse.text(403, ((Authenticator.Refused) result).message());
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
