package io.roster.server.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.server.model.RegistryException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Users, tokens and grants edited through the admin API (decision 98): each change is made to the
 * auth file's JSON as {@code auth} makes it (the same checks, the same layout, a password hashed
 * as {@link Passwords#hash} does), written atomically ({@link AuthFileWriter}), then taken in by
 * the {@link Authenticator}'s own reload, which a change waits for; and audited. A password reset
 * changes the user's password stamp, so the access tokens of the old password are refused from
 * that reload on. A file that cannot be written (read-only: no write permission for its owner, or
 * a read-only file system) refuses the change with UNAVAILABLE, and nothing changes.
 *
 * <p>In a cluster each member has its own auth file: a change is written on the member that
 * serves it, and the others keep theirs.
 *
 * <p>Thread-safe: changes are serialised on this object.
 */
public final class IdentityAdmin {

  /** The shortest password a user may be given (as {@code auth user} asks). */
  public static final int MIN_PASSWORD = 12;
  /** How long a change waits for the reload that takes it in. */
  static final Duration RELOAD_WAIT = Authenticator.RELOAD_EVERY.multipliedBy(2).plusSeconds(2);

  /** One identity of the file, without its secret. */
  public record Identity(String name, String kind, List<Grant> grants, String san) {}

  private final Path file;
  private final AuthFileWriter.Rename rename;
  private final AtomicReference<CompletableFuture<Boolean>> nextCheck =
      new AtomicReference<>(new CompletableFuture<>());

  /** Edits {@code file}, the file {@code authenticator} was opened on. */
  public IdentityAdmin(Authenticator authenticator, Path file) {
    this(authenticator, file, AuthFileWriter.ATOMIC);
  }

  IdentityAdmin(Authenticator authenticator, Path file, AuthFileWriter.Rename rename) {
    this.file = file;
    this.rename = rename;
    authenticator.onCheck(() -> java.util.Objects.requireNonNull(nextCheck.getAndSet(new CompletableFuture<>()))
        .complete(Boolean.TRUE));
  }

  /** Every user, token and certificate, with its grants; never a password hash or a token's digest. */
  public List<Identity> list() {
    AuthFile f = AuthFile.read(file);
    List<Identity> out = new ArrayList<>();
    JsonNode root = AuthFile.tree(file);
    for (String kind : List.of("users", "tokens", "certificates")) {
      for (JsonNode n : root.path(kind)) {
        String name = n.path("name").asText();
        List<Grant> grants = switch (kind) {
          case "users" -> java.util.Objects.requireNonNull(f.user(name)).grants();
          case "tokens" -> java.util.Objects.requireNonNull(f.token(name)).grants();
          default -> java.util.Objects.requireNonNull(f.certificate(name)).grants();
        };
        out.add(new Identity(name, kind.substring(0, kind.length() - 1), grants, n.path("san").asText("")));
      }
    }
    return out;
  }

  /** Adds a user with a password and grants; FAILED_PRECONDITION when the name is taken. */
  public synchronized void addUser(Principal who, String name, String password, List<Grant> grants) {
    change(who, "AddUser", name, "grants=" + wires(grants), root -> {
      checkNew(root, name);
      checkPassword(password);
      root.withArray("users").addObject().put("name", name).put("password", Passwords.hash(password))
          .set("grants", AuthFile.grantsJson(grants));
    });
  }

  /** Adds a static token with grants; returns the token, shown this once. */
  public synchronized String addToken(Principal who, String name, List<Grant> grants) {
    String token = "rst_" + Passwords.randomSecret(32);
    change(who, "AddToken", name, "grants=" + wires(grants), root -> {
      checkNew(root, name);
      root.withArray("tokens").addObject().put("name", name).put("sha256", Passwords.sha256(token))
          .set("grants", AuthFile.grantsJson(grants));
    });
    return token;
  }

  /** Removes a user, token or certificate; its sessions end at the reload. */
  public synchronized void remove(Principal who, String name) {
    change(who, "RemoveIdentity", name, "", root -> entry(root, name, true));
  }

  /** Gives a user a new password: the access tokens of the old one are refused from the reload on. */
  public synchronized void resetPassword(Principal who, String name, String password) {
    change(who, "ResetPassword", name, "", root -> {
      checkPassword(password);
      JsonNode user = entry(root, name, false);
      if (!user.has("password")) {
        throw new RegistryException(RegistryException.Kind.INVALID_ARGUMENT, "name",
            "name: \"" + name + "\" is not a user (expected: a user, which has a password)");
      }
      ((ObjectNode) user).put("password", Passwords.hash(password));
    });
  }

  /** Adds ({@code add}) or removes a grant of an identity. */
  public synchronized void grant(Principal who, String name, Grant grant, boolean add) {
    change(who, add ? "AddGrant" : "RemoveGrant", name, "grant=" + wire(grant), root -> {
      ObjectNode e = (ObjectNode) entry(root, name, false);
      List<Grant> now = new ArrayList<>(grantsOf(e));
      if (add ? now.contains(grant) : !now.remove(grant)) {
        throw new RegistryException(add ? RegistryException.Kind.FAILED_PRECONDITION : RegistryException.Kind.NOT_FOUND,
            "grant", "grant: " + wire(grant) + (add ? " is already given to \"" : " is not given to \"") + name + "\"");
      }
      if (add) {
        now.add(grant);
      }
      e.set("grants", AuthFile.grantsJson(now));
    });
  }

  /** A grant as {@code PERMISSION@NAMESPACE[/SERVICES]}. */
  public static String wire(Grant g) {
    return g.permission().wireName() + "@" + g.namespace() + (g.services().equals(Grant.ALL) ? "" : "/" + g.services());
  }

  /** Grants as {@code PERMISSION@NAMESPACE[/SERVICES]}, comma-separated. */
  public static String wires(List<Grant> grants) {
    return String.join(",", grants.stream().map(IdentityAdmin::wire).toList());
  }

  /**
   * Parses {@code PERMISSION@NAMESPACE[/SERVICES]}, as {@code auth user} reads its grants.
   *
   * @throws RegistryException INVALID_ARGUMENT naming {@code field} and the value
   */
  public static Grant parse(String field, String text) {
    try {
      return AuthCommand.grants(List.of("user", "file", "name", text), 3).get(0);
    } catch (IllegalArgumentException e) {
      throw RegistryException.invalid(field, text,
          "PERMISSION@NAMESPACE[/SERVICES] with PERMISSION read, write or admin, e.g. write@prod");
    }
  }

  @FunctionalInterface
  private interface Edit {
    void apply(ObjectNode root);
  }

  private void change(Principal who, String action, String name, String detail, Edit edit) {
    try {
      if (!AuthFile.validName(name)) {
        throw RegistryException.invalid("name", name, "1..64 characters of [A-Za-z0-9_.@-]");
      }
      refuseReadOnly();
      ObjectNode root = AuthFile.tree(file);
      edit.apply(root);
      try {
        AuthFileWriter.write(file, root, rename);
      } catch (IllegalArgumentException e) {
        throw new RegistryException(RegistryException.Kind.INVALID_ARGUMENT, "", String.valueOf(e.getMessage()));
      } catch (IOException e) {
        throw new RegistryException(RegistryException.Kind.UNAVAILABLE, "auth-file", "the auth file " + file
            + " could not be written (" + e.getMessage() + "); nothing was changed");
      }
    } catch (RegistryException e) {
      Audit.log(who, action, name, detail, e.getMessage());
      throw e;
    }
    awaitReload();
    Audit.log(who, action, name, detail, "ok");
  }

  /** Refuses a file whose owner may not write it, or on a file system that takes no writes. */
  private void refuseReadOnly() {
    boolean ownerMayWrite = true;
    try {
      ownerMayWrite = Files.getPosixFilePermissions(file).contains(PosixFilePermission.OWNER_WRITE);
    } catch (UnsupportedOperationException | IOException e) {
      // not POSIX, or not readable: the write says
    }
    if (!ownerMayWrite || !Files.isWritable(file)) {
      throw new RegistryException(RegistryException.Kind.UNAVAILABLE, "auth-file", "the auth file " + file
          + " is read-only; nothing was changed (edit it where it is managed, or make it writable)");
    }
  }

  /** Waits, bounded, for the second check of the file from now: the one that read what was written. */
  private void awaitReload() {
    CompletableFuture<Boolean> first = java.util.Objects.requireNonNull(nextCheck.get());
    try {
      first.thenCompose(v -> java.util.Objects.requireNonNull(nextCheck.get())).get(RELOAD_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      // written: the next check takes it in
    }
  }

  private static void checkNew(ObjectNode root, String name) {
    for (String list : List.of("users", "tokens", "certificates")) {
      for (JsonNode n : root.path(list)) {
        if (n.path("name").asText().equals(name)) {
          throw new RegistryException(RegistryException.Kind.FAILED_PRECONDITION, "name", "name: \"" + name
              + "\" is already a " + list.substring(0, list.length() - 1) + " of the auth file");
        }
      }
    }
  }

  private static void checkPassword(String password) {
    if (password.length() < MIN_PASSWORD) {
      throw new RegistryException(RegistryException.Kind.INVALID_ARGUMENT, "password", "password: "
          + password.length() + " characters (expected: at least " + MIN_PASSWORD + ")");
    }
  }

  /** The entry named {@code name} (removed when {@code remove}); NOT_FOUND when there is none. */
  private static JsonNode entry(ObjectNode root, String name, boolean remove) {
    for (String list : List.of("users", "tokens", "certificates")) {
      for (Iterator<JsonNode> it = root.path(list).elements(); it.hasNext(); ) {
        JsonNode n = it.next();
        if (n.path("name").asText().equals(name)) {
          if (remove) {
            it.remove();
          }
          return n;
        }
      }
    }
    throw new RegistryException(RegistryException.Kind.NOT_FOUND, "name", "name: \"" + name
        + "\" is no user, token or certificate of the auth file");
  }

  private static List<Grant> grantsOf(JsonNode entry) {
    List<Grant> grants = new ArrayList<>();
    for (JsonNode g : entry.path("grants")) {
      Permission p = Permission.named(g.path("permission").asText());
      if (p != null) {
        grants.add(new Grant(p, g.path("namespace").asText(), g.path("services").asText(Grant.ALL)));
      }
    }
    return grants;
  }
}
