package io.roster.server.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Grant;
import io.roster.server.auth.IdentityAdmin;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.http.HttpCallers;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.JsonEnvelope;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * {@code /roster/v1/admin/identities} (decision 98), for an identity with {@code admin} on every
 * namespace: GET lists the auth file's users, tokens and certificates with their grants (never a
 * secret); POST adds a user ({@code kind=user}, {@code name}, {@code password}, {@code grants}) or
 * a token ({@code kind=token}: the answer carries it, once); DELETE removes one ({@code name});
 * {@code PUT /identities/password} resets a user's password; POST and DELETE {@code
 * /identities/grants} add or remove one grant ({@code name}, {@code grant}). Every answer names the
 * {@code member} whose auth file was read or written. Passwords go in the form body, never the URL.
 * Thread-safe; the file's changes are {@link IdentityAdmin}'s.
 */
final class IdentitiesApi {

  private final @Nullable IdentityAdmin admin;
  private final HttpCallers callers;
  private final java.util.function.Supplier<String> member;

  IdentitiesApi(@Nullable IdentityAdmin admin, HttpCallers callers, java.util.function.Supplier<String> member) {
    this.admin = admin;
    this.callers = callers;
    this.member = member;
  }

  JsonNode answer(HttpRequest r, String route) {
    Principal who = callers.checkAll(r, Permission.ADMIN, Grant.ALL);
    IdentityAdmin a = admin;
    if (a == null) {
      throw new HttpException(404, "auth is off (no --auth-file): there are no identities to manage "
          + "(docs/security.md)");
    }
    ObjectNode o = JsonEnvelope.JSON.createObjectNode();
    o.put("member", member.get());
    String method = r.method();
    switch (route) {
      case "/identities" -> {
        switch (method) {
          case "GET" -> {
            ArrayNode items = o.putArray("identities");
            for (IdentityAdmin.Identity i : a.list()) {
              ObjectNode n = items.addObject().put("name", i.name()).put("kind", i.kind());
              ArrayNode grants = n.putArray("grants");
              i.grants().forEach(g -> grants.add(IdentityAdmin.wire(g)));
              if (!i.san().isEmpty()) {
                n.put("san", i.san());
              }
            }
          }
          case "POST" -> {
            String kind = r.required("kind");
            String name = r.required("name");
            List<Grant> grants = grants(r.param("grants", ""));
            if (kind.equals("user")) {
              a.addUser(who, name, r.required("password"), grants);
            } else if (kind.equals("token")) {
              o.put("token", a.addToken(who, name, grants));
            } else {
              throw HttpException.badParameter("kind", kind, "user or token");
            }
            o.put("name", name).put("kind", kind);
          }
          case "DELETE" -> {
            a.remove(who, r.required("name"));
            o.put("name", r.required("name"));
          }
          default -> throw notServed(r, "GET, POST, DELETE");
        }
      }
      case "/identities/password" -> {
        if (!method.equals("PUT")) {
          throw notServed(r, "PUT");
        }
        a.resetPassword(who, r.required("name"), r.required("password"));
        o.put("name", r.required("name"));
      }
      case "/identities/grants" -> {
        if (!method.equals("POST") && !method.equals("DELETE")) {
          throw notServed(r, "POST, DELETE");
        }
        Grant g = IdentityAdmin.parse("grant", r.required("grant"));
        a.grant(who, r.required("name"), g, method.equals("POST"));
        o.put("name", r.required("name")).put("grant", IdentityAdmin.wire(g));
      }
      default -> throw new HttpException(404, "no such path: " + r.path() + " (see docs/admin-api.md)");
    }
    return o;
  }

  private static HttpException notServed(HttpRequest r, String expected) {
    return new HttpException(405, r.method() + " " + r.path() + " is not served (expected: " + expected + ")");
  }

  /** Comma-separated {@code PERMISSION@NAMESPACE[/SERVICES]}; none is allowed (an identity that may do nothing yet). */
  private static List<Grant> grants(String text) {
    List<Grant> grants = new ArrayList<>();
    for (String g : text.split(",", -1)) {
      if (!g.isBlank()) {
        grants.add(IdentityAdmin.parse("grants", g.trim()));
      }
    }
    return grants;
  }
}
