package io.roster.server.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * {@code java -jar roster-server.jar auth ...}: writes the auth file (docs/security.md). No user,
 * password, token or secret ships with Roster; this command makes each one.
 *
 * <pre>
 * auth init    FILE                                   a new file with a fresh token secret and no one in it
 * auth user    FILE NAME GRANT... [--replace]         add a user, or set a user's password and grants; the
 *                                                     password is read from stdin (one line) or the
 *                                                     ROSTER_PASSWORD environment variable
 * auth token   FILE NAME GRANT... [--replace]         add a static token, or rotate one; prints the token once
 * auth certificate FILE NAME SAN GRANT... [--replace] add or change a client certificate identity: a verified
 *                                                     client certificate with SAN (a SPIFFE ID or DNS name) is NAME
 * auth remove  FILE NAME                              remove a user, token or certificate (its sessions end at the reload)
 * GRANT: PERMISSION@NAMESPACE[/SERVICES], e.g. admin@*  write@prod  read@prod/orders-*  write@prod/DEFAULT_GROUP@@orders
 * </pre>
 *
 * A name is a user's, a token's or a certificate's, never two of them: each command refuses a name
 * an identity of another kind has, unless {@code --replace} says to replace the one by the other.
 * A user given a new password loses the access tokens of the old one (decision 79); given the
 * password it has, only its grants change.
 *
 * <p>Writes go to a temporary file first and replace the file in one move, owner-only where the file
 * system allows, so a server that reloads it never reads half a file.
 */
public final class AuthCommand {

  private final PrintStream out;
  private final Map<String, String> env;
  private final BufferedReader in;

  AuthCommand(PrintStream out, Map<String, String> env, BufferedReader in) {
    this.out = out;
    this.env = env;
    this.in = in;
  }

  /** Runs {@code args} (after the word {@code auth}); returns the process exit status. */
  public static int main(List<String> args, PrintStream out, PrintStream err) {
    try {
      new AuthCommand(out, System.getenv(),
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))).run(args);
      return 0;
    } catch (IllegalArgumentException e) {
      err.println("roster auth: " + e.getMessage());
      return 2;
    }
  }

  static final String USAGE = """
      Usage: java -jar roster-server.jar auth COMMAND FILE ...
        auth init   FILE                             create FILE with a fresh token secret and no users or tokens
        auth user   FILE NAME GRANT... [--replace]   add a user or set its password and grants; password from
                                                     stdin (one line) or $ROSTER_PASSWORD; a new password ends
                                                     the access tokens of the old one
        auth token  FILE NAME GRANT... [--replace]   add a static token or rotate one; the token is printed once
        auth certificate FILE NAME SAN GRANT... [--replace]
                                                     add or change a client certificate identity: with
                                                     --tls-client-ca, a client certificate whose URI or DNS SAN
                                                     is SAN is NAME (SAN: a SPIFFE ID such as
                                                     spiffe://corp.example/ns/prod/sa/frontend, ending in /* for
                                                     every ID under that path, or a DNS name such as
                                                     frontend.corp.example)
        auth remove FILE NAME                        remove a user, a token or a certificate
      A name is a user's, a token's or a certificate's: --replace lets one command replace an
      identity of another kind with that name (its sessions end at the server's next check).
      GRANT is PERMISSION@NAMESPACE or PERMISSION@NAMESPACE/SERVICES: PERMISSION is read, write or admin;
      NAMESPACE is a namespace or * for all; SERVICES a pattern (* matches anything) over the service name,
      or over GROUP@@SERVICE when it contains @@. Examples: admin@*  write@prod  read@prod/orders-*
      """;

  void run(List<String> given) {
    boolean replace = given.contains(REPLACE);
    List<String> args = given.stream().filter(a -> !a.equals(REPLACE)).toList();
    if (replace && !args.isEmpty() && !List.of("user", "token", "certificate").contains(args.get(0))) {
      throw new IllegalArgumentException(REPLACE + ": only `auth user`, `auth token` and `auth certificate` take it\n"
          + USAGE);
    }
    if (args.size() < 2) {
      throw new IllegalArgumentException("expected a command and a file\n" + USAGE);
    }
    String command = args.get(0);
    Path file = Path.of(args.get(1));
    switch (command) {
      case "init" -> {
        if (Files.exists(file)) {
          throw new IllegalArgumentException(file + ": exists already (init never overwrites an auth file)");
        }
        write(file, AuthFile.empty());
        out.println("Created " + file
            + " (no identities yet; add them with `auth user`, `auth token` and `auth certificate`)");
      }
      case "user" -> {
        List<Grant> grants = grants(args, 3);
        String password = env.getOrDefault("ROSTER_PASSWORD", "");
        if (password.isEmpty()) {
          password = readLine();
        }
        if (password.length() < 12) {
          throw new IllegalArgumentException("password: " + password.length() + " characters (expected: at least 12)");
        }
        ObjectNode root = AuthFile.tree(file);
        String name = name(args);
        refuseOtherKind(root, "tokens", name, file, replace, "auth user", "a token");
        refuseOtherKind(root, "certificates", name, file, replace, "auth user", "a certificate");
        JsonNode existing = find(root, "users", name);
        String kept = existing == null ? null : existing.path("password").asText();
        // The same password keeps its hash, so that a change of grants leaves the user's logins be.
        boolean samePassword = kept != null && Passwords.matches(password, kept);
        remove(root, name);
        root.withArray("users").addObject().put("name", name)
            .put("password", samePassword ? kept : Passwords.hash(password))
            .set("grants", AuthFile.grantsJson(grants));
        write(file, root);
        out.println(existing == null ? "User " + name + " written to " + file
            : samePassword ? "User " + name + " written to " + file + " (same password: only its grants changed)"
            : "User " + name + " written to " + file + " with a new password: the access tokens of the old one "
                + "are refused from the server's next check of the file, and the sessions that used them end");
      }
      case "token" -> {
        List<Grant> grants = grants(args, 3);
        ObjectNode root = AuthFile.tree(file);
        String name = name(args);
        refuseOtherKind(root, "users", name, file, replace, "auth token", "a user");
        refuseOtherKind(root, "certificates", name, file, replace, "auth token", "a certificate");
        remove(root, name); // a token of that name: rotated, its sessions stay
        String token = "rst_" + Passwords.randomSecret(32);
        root.withArray("tokens").addObject().put("name", name).put("sha256", Passwords.sha256(token))
            .set("grants", AuthFile.grantsJson(grants));
        write(file, root);
        out.println(token);
      }
      case "certificate" -> {
        String san = san(args);
        List<Grant> grants = grants(args, 4);
        ObjectNode root = AuthFile.tree(file);
        String name = name(args);
        refuseOtherKind(root, "users", name, file, replace, "auth certificate", "a user");
        refuseOtherKind(root, "tokens", name, file, replace, "auth certificate", "a token");
        remove(root, name); // a certificate of that name: its SAN or grants change
        root.withArray("certificates").addObject().put("name", name).put("san", san)
            .set("grants", AuthFile.grantsJson(grants));
        write(file, root);
        out.println("Certificate " + name + " (SAN " + san + ") written to " + file);
      }
      case "remove" -> {
        ObjectNode root = AuthFile.tree(file);
        String name = name(args);
        if (!remove(root, name)) {
          throw new IllegalArgumentException("NAME: \"" + name + "\" (expected: a user, token or certificate of " + file
              + ")");
        }
        write(file, root);
        out.println("Removed " + name + " from " + file);
      }
      default -> throw new IllegalArgumentException("command: \"" + command
          + "\" (expected: init, user, token, certificate or remove)\n"
          + USAGE);
    }
  }

  private static final String REPLACE = "--replace";

  /**
   * Refuses to write over an entry of the other kind ({@code list}) named {@code name}, unless
   * {@code replace} says to.
   */
  private static void refuseOtherKind(ObjectNode root, String list, String name, Path file, boolean replace,
      String command, String kind) {
    if (!replace && find(root, list, name) != null) {
      throw new IllegalArgumentException("NAME: \"" + name + "\" is " + kind + " of " + file + " (expected: a name "
          + "no " + kind.substring(2) + " has; `" + command + "` replaces " + kind + " only when given " + REPLACE
          + ", which ends its sessions)");
    }
  }

  /** The entry of {@code list} named {@code name}, or null. */
  private static @Nullable JsonNode find(ObjectNode root, String list, String name) {
    for (JsonNode n : root.path(list)) {
      if (n.path("name").asText().equals(name)) {
        return n;
      }
    }
    return null;
  }

  private static String name(List<String> args) {
    if (args.size() < 3 || !AuthFile.validName(args.get(2))) {
      throw new IllegalArgumentException("NAME: \"" + (args.size() < 3 ? "" : args.get(2))
          + "\" (expected: 1..64 characters of [A-Za-z0-9_.@-])");
    }
    return args.get(2);
  }

  /** The SAN of {@code auth certificate FILE NAME SAN ...}, checked as the auth file checks it. */
  private static String san(List<String> args) {
    name(args);
    String san = args.size() < 4 ? "" : args.get(3);
    String problem = ClientCertificates.problem(san);
    if (problem != null) {
      throw new IllegalArgumentException("SAN: \"" + san + "\" (expected: " + problem + ")");
    }
    return san;
  }

  /** Parses each {@code PERMISSION@NAMESPACE[/SERVICES]} from {@code args[from]} on (after the name, or the SAN). */
  static List<Grant> grants(List<String> args, int from) {
    name(args);
    if (args.size() <= from) {
      throw new IllegalArgumentException("GRANT: none given (expected: at least one, like admin@* or write@prod)");
    }
    List<Grant> grants = new ArrayList<>();
    for (String g : args.subList(from, args.size())) {
      int at = g.indexOf('@');
      Permission p = at < 0 ? null : Permission.named(g.substring(0, at));
      String rest = at < 0 ? "" : g.substring(at + 1);
      int slash = rest.indexOf('/');
      String namespace = slash < 0 ? rest : rest.substring(0, slash);
      String services = slash < 0 ? Grant.ALL : rest.substring(slash + 1);
      if (p == null || namespace.isEmpty() || services.isEmpty()) {
        throw new IllegalArgumentException("GRANT: \"" + g
            + "\" (expected: PERMISSION@NAMESPACE[/SERVICES] with PERMISSION read, write or admin, e.g. write@prod)");
      }
      grants.add(new Grant(p, namespace, services));
    }
    return grants;
  }

  private String readLine() {
    try {
      String line = in.readLine();
      return line == null ? "" : line;
    } catch (IOException e) {
      throw new IllegalArgumentException("password: cannot read it from stdin (" + e + ")", e);
    }
  }

  /** Removes the user, token or certificate named {@code name}; whether there was one. */
  private static boolean remove(ObjectNode root, String name) {
    boolean removed = false;
    for (String list : List.of("users", "tokens", "certificates")) {
      JsonNode a = root.path(list);
      for (Iterator<JsonNode> it = a.elements(); it.hasNext(); ) {
        if (it.next().path("name").asText().equals(name)) {
          it.remove();
          removed = true;
        }
      }
    }
    return removed;
  }

  private static void write(Path file, JsonNode root) {
    AuthFile.parse(root, file.toString()); // never write a file the server would refuse
    Path dir = file.toAbsolutePath().getParent();
    try {
      Path tmp = Files.createTempFile(dir, ".auth", ".tmp");
      try {
        restrict(tmp);
        Files.writeString(tmp, AuthFile.pretty(root));
        try {
          Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(file + ": cannot write it (" + e + ")", e);
    }
  }

  private static void restrict(Path p) throws IOException {
    try {
      Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
    } catch (UnsupportedOperationException e) {
      // not a POSIX file system: its defaults apply
    }
  }
}
