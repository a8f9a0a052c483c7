package io.roster.server.testing;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.auth.Passwords;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Iterator;

/**
 * An auth file for tests, in the format {@code roster-server.jar auth} writes (users with PBKDF2
 * hashes, static tokens by their SHA-256, client certificates by their SAN, grants as {@code
 * PERMISSION@NAMESPACE[/SERVICES]}).
 * Every change is written at once, in one move, so a server watching the file never reads half
 * of it. Not thread-safe.
 *
 * <pre>{@code
 * AuthFiles auth = AuthFiles.create(dir.resolve("auth.json")).user("ops", "a long password", "admin@*");
 * String token = auth.token("deployer", "write@prod/orders-*");
 * }</pre>
 */
public final class AuthFiles {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Path path;
  private final ObjectNode root = JSON.createObjectNode();

  private AuthFiles(Path path) {
    this.path = path;
    root.put("version", 1);
    root.put("tokenSecret", Passwords.randomSecret(32));
    root.putArray("users");
    root.putArray("tokens");
    write();
  }

  /** A new file at {@code path} with a fresh token secret and no one in it. */
  public static AuthFiles create(Path path) {
    return new AuthFiles(path);
  }

  public Path path() {
    return path;
  }

  /** Adds (or replaces) a user who logs in with {@code password}. */
  public AuthFiles user(String name, String password, String... grants) {
    remove(name);
    ObjectNode u = ((ArrayNode) root.get("users")).addObject();
    u.put("name", name).put("password", Passwords.hash(password)).set("grants", grants(grants));
    write();
    return this;
  }

  /** Adds (or replaces) a static token; returns the token. */
  public String token(String name, String... grants) {
    remove(name);
    String token = "rst_" + Passwords.randomSecret(32);
    ObjectNode t = ((ArrayNode) root.get("tokens")).addObject();
    t.put("name", name).put("sha256", Passwords.sha256(token)).set("grants", grants(grants));
    write();
    return token;
  }

  /**
   * Adds (or replaces) a client certificate identity: a client certificate whose URI or DNS SAN is
   * {@code san} (a SPIFFE ID or a DNS name) is {@code name}.
   */
  public AuthFiles certificate(String name, String san, String... grants) {
    remove(name);
    ObjectNode c = root.withArray("certificates").addObject();
    c.put("name", name).put("san", san).set("grants", grants(grants));
    write();
    return this;
  }

  /** Removes a user, token or certificate (its sessions end at the server's next check of the file). */
  public AuthFiles remove(String name) {
    for (String list : new String[] {"users", "tokens", "certificates"}) {
      for (Iterator<com.fasterxml.jackson.databind.JsonNode> it = root.path(list).elements(); it.hasNext(); ) {
        if (it.next().path("name").asText().equals(name)) {
          it.remove();
        }
      }
    }
    write();
    return this;
  }

  private static ArrayNode grants(String... grants) {
    ArrayNode a = JSON.createArrayNode();
    for (String g : grants) {
      int at = g.indexOf('@');
      String rest = g.substring(at + 1);
      int slash = rest.indexOf('/');
      ObjectNode o = a.addObject().put("permission", g.substring(0, at))
          .put("namespace", slash < 0 ? rest : rest.substring(0, slash));
      if (slash >= 0) {
        o.put("services", rest.substring(slash + 1));
      }
    }
    return a;
  }

  private void write() {
    try {
      Path tmp = Files.createTempFile(path.toAbsolutePath().getParent(), ".auth", ".tmp");
      Files.writeString(tmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root));
      Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
