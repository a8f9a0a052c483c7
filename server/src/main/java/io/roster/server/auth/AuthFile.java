package io.roster.server.auth;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The auth file, read: its users (name, password hash, grants), its static tokens (name, SHA-256 of
 * the token, grants), its client certificates (name, the SAN that maps a certificate to it, grants:
 * {@link ClientCertificates}) and the secret that signs access tokens. JSON, documented in
 * docs/security.md:
 *
 * <pre>{@code
 * {"version": 1, "tokenSecret": "...",
 *  "users":  [{"name": "ops", "password": "pbkdf2-sha256$...", "grants": [{"permission": "admin", "namespace": "*"}]}],
 *  "tokens": [{"name": "orders-deployer", "sha256": "...", "grants": [{"permission": "write", "namespace": "prod",
 *              "services": "orders-*"}]}],
 *  "certificates": [{"name": "frontend", "san": "spiffe://corp.example/ns/prod/sa/frontend",
 *              "grants": [{"permission": "read", "namespace": "prod"}]}]}
 * }</pre>
 *
 * <p>Names are unique across the three lists, and so are certificates' SANs.
 *
 * <p>Strict: an unknown field, a duplicate name or a malformed value refuses the whole file with
 * a message naming the file, the field's path, the value and what is expected (a typo in a
 * security setting must not pass silently). Immutable.
 */
public final class AuthFile {

  /** The format {@link #read} understands. */
  public static final int VERSION = 1;

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_NAME = 64;

  /**
   * A user: logs in with a password, then uses the access token it gets.
   *
   * @param stamp {@link Passwords#stamp} of {@code passwordHash}, which the user's access tokens carry
   */
  record User(String name, String passwordHash, List<Grant> grants, String stamp) {}

  /** A static token: the caller presents the token itself. */
  record Token(String name, String sha256, List<Grant> grants) {}

  /**
   * A client certificate identity: a certificate the TLS layer verified whose SAN is {@code san}
   * (a SPIFFE ID or a DNS name; a SPIFFE ID ending in {@code /*} matches every ID under its path).
   */
  record Certificate(String name, String san, List<Grant> grants) {}

  private final Map<String, User> users;
  private final Map<String, Token> tokensByHash;
  private final Map<String, Token> tokensByName;
  private final Map<String, Certificate> certificatesByName;
  /** Certificate entries by {@link ClientCertificates#key} of their exact SAN. */
  private final Map<String, Certificate> certificatesBySan;
  /** Certificate entries of SPIFFE prefixes, by the prefix up to and with its last slash. */
  private final Map<String, Certificate> certificatesByPrefix;
  private final byte @Nullable [] tokenSecret;

  private AuthFile(Map<String, User> users, Map<String, Token> tokensByName,
      Map<String, Certificate> certificatesByName, byte @Nullable [] tokenSecret) {
    this.users = Map.copyOf(users);
    this.certificatesByName = Map.copyOf(certificatesByName);
    Map<String, Certificate> bySan = new LinkedHashMap<>();
    Map<String, Certificate> byPrefix = new LinkedHashMap<>();
    for (Certificate c : certificatesByName.values()) {
      if (ClientCertificates.isPrefix(c.san())) {
        byPrefix.put(c.san().substring(0, c.san().length() - 1), c);
      } else {
        bySan.put(ClientCertificates.key(c.san()), c);
      }
    }
    this.certificatesBySan = Map.copyOf(bySan);
    this.certificatesByPrefix = Map.copyOf(byPrefix);
    this.tokensByName = Map.copyOf(tokensByName);
    Map<String, Token> byHash = new LinkedHashMap<>();
    tokensByName.values().forEach(t -> byHash.put(t.sha256(), t));
    this.tokensByHash = Map.copyOf(byHash);
    this.tokenSecret = tokenSecret;
  }

  /**
   * Reads and checks the file at {@code path}.
   *
   * @throws IllegalArgumentException naming the file, the field, the value and what is expected
   */
  public static AuthFile read(Path path) {
    byte[] bytes;
    try {
      bytes = Files.readAllBytes(path);
    } catch (IOException e) {
      throw new IllegalArgumentException("auth file " + path + ": cannot read it (" + e + ")", e);
    }
    return parse(bytes, path.toString());
  }

  /**
   * Checks the content {@code bytes} of {@code file}.
   *
   * @throws IllegalArgumentException naming the file, the field, the value and what is expected
   */
  static AuthFile parse(byte[] bytes, String file) {
    JsonNode root;
    try {
      root = JSON.readTree(bytes);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("auth file " + file + ": not JSON (" + e.getOriginalMessage() + ")", e);
    } catch (IOException e) {
      throw new IllegalArgumentException("auth file " + file + ": cannot read it (" + e + ")", e);
    }
    return parse(root, file);
  }

  static AuthFile parse(@Nullable JsonNode root, String file) {
    if (root == null || !root.isObject()) {
      throw bad(file, "(top level)", root == null ? "" : root.getNodeType().toString(), "a JSON object");
    }
    only(root, file, "", Set.of("version", "tokenSecret", "users", "tokens", "certificates"));
    JsonNode version = root.path("version");
    if (!version.isInt() || version.intValue() != VERSION) {
      throw bad(file, "version", version.toString(), String.valueOf(VERSION));
    }
    byte @Nullable [] secret = null;
    if (root.has("tokenSecret")) {
      String s = text(root, "tokenSecret", file, "tokenSecret");
      try {
        secret = Base64.getUrlDecoder().decode(s);
      } catch (IllegalArgumentException e) {
        secret = new byte[0];
      }
      if (secret.length < 32) {
        throw bad(file, "tokenSecret", "(" + s.length() + " characters)",
            "at least 32 random bytes in base64url, as `roster-server.jar auth init` writes");
      }
    }
    Set<String> names = new java.util.HashSet<>();
    Map<String, User> users = new LinkedHashMap<>();
    int i = 0;
    for (JsonNode u : array(root, "users", file)) {
      String at = "users[" + i++ + "]";
      object(u, file, at);
      only(u, file, at + ".", Set.of("name", "password", "grants"));
      String name = name(u, file, at, names);
      String hash = text(u, "password", file, at + ".password");
      String problem = Passwords.problem(hash);
      if (problem != null) {
        throw bad(file, at + ".password", "(hidden)", problem);
      }
      users.put(name, new User(name, hash, grants(u, file, at), Passwords.stamp(hash)));
    }
    Map<String, Token> tokens = new LinkedHashMap<>();
    Set<String> hashes = new java.util.HashSet<>();
    i = 0;
    for (JsonNode t : array(root, "tokens", file)) {
      String at = "tokens[" + i++ + "]";
      object(t, file, at);
      only(t, file, at + ".", Set.of("name", "sha256", "grants"));
      String name = name(t, file, at, names);
      String sha = text(t, "sha256", file, at + ".sha256");
      if (!sha.matches("[0-9a-f]{64}")) {
        throw bad(file, at + ".sha256", sha, "64 lower-case hex digits: the SHA-256 of the token");
      }
      if (!hashes.add(sha)) {
        throw bad(file, at + ".sha256", sha, "a token no other entry has");
      }
      tokens.put(name, new Token(name, sha, grants(t, file, at)));
    }
    Map<String, Certificate> certificates = new LinkedHashMap<>();
    Set<String> sans = new java.util.HashSet<>();
    i = 0;
    for (JsonNode c : array(root, "certificates", file)) {
      String at = "certificates[" + i++ + "]";
      object(c, file, at);
      only(c, file, at + ".", Set.of("name", "san", "grants"));
      String name = name(c, file, at, names);
      String san = text(c, "san", file, at + ".san");
      String problem = ClientCertificates.problem(san);
      if (problem != null) {
        throw bad(file, at + ".san", san, problem);
      }
      if (!sans.add(ClientCertificates.key(san))) {
        throw bad(file, at + ".san", san, "a SAN no other certificate entry has");
      }
      certificates.put(name, new Certificate(name, san, grants(c, file, at)));
    }
    if (!users.isEmpty() && secret == null) {
      throw bad(file, "tokenSecret", "(missing)",
          "a secret to sign the access tokens users log in for, as `roster-server.jar auth init` writes");
    }
    return new AuthFile(users, tokens, certificates, secret);
  }

  @Nullable User user(String name) {
    return users.get(name);
  }

  @Nullable Token tokenWithHash(String sha256) {
    return tokensByHash.get(sha256);
  }

  @Nullable Token token(String name) {
    return tokensByName.get(name);
  }

  @Nullable Certificate certificate(String name) {
    return certificatesByName.get(name);
  }

  /**
   * The certificate entries the SANs of a client certificate map to: those its SANs match exactly
   * (a SPIFFE ID as written, a DNS name in any case); when none does, for each URI SAN that is a
   * valid SPIFFE ID the entry of the longest prefix it lies under. Distinct entries, in the order
   * found; more than one means the certificate is ambiguous.
   */
  List<Certificate> certificatesFor(ClientCertificates.Sans sans) {
    java.util.LinkedHashSet<Certificate> found = new java.util.LinkedHashSet<>();
    for (String uri : sans.uris()) {
      Certificate c = certificatesBySan.get(uri);
      if (c != null && uri.startsWith(ClientCertificates.SPIFFE)) {
        found.add(c);
      }
    }
    for (String dns : sans.dnsNames()) {
      Certificate c = certificatesBySan.get(ClientCertificates.dnsKey(dns));
      if (c != null && !dns.contains(":")) {
        found.add(c);
      }
    }
    if (found.isEmpty() && !certificatesByPrefix.isEmpty()) {
      for (String uri : sans.uris()) {
        if (!ClientCertificates.validSpiffeId(uri)) {
          continue;
        }
        for (int slash = uri.lastIndexOf('/'); slash >= ClientCertificates.SPIFFE.length();
            slash = uri.lastIndexOf('/', slash - 1)) {
          Certificate c = certificatesByPrefix.get(uri.substring(0, slash + 1));
          if (c != null) {
            found.add(c); // the longest prefix only
            break;
          }
        }
      }
    }
    return List.copyOf(found);
  }

  /** Every user, in no particular order. */
  java.util.Collection<User> users() {
    return users.values();
  }

  /** Every static token, in no particular order. */
  java.util.Collection<Token> tokens() {
    return tokensByName.values();
  }

  byte @Nullable [] tokenSecret() {
    return tokenSecret;
  }

  /** How many users, tokens and certificates, for the log line of a load. */
  String summary() {
    return users.size() + " users, " + tokensByName.size() + " tokens, " + certificatesByName.size() + " certificates";
  }

  // --- writing, for the `auth` command ---

  /** A new, empty file's JSON: version and a fresh token secret. */
  static ObjectNode empty() {
    ObjectNode root = JSON.createObjectNode();
    root.put("version", VERSION);
    root.put("tokenSecret", Passwords.randomSecret(32));
    root.putArray("users");
    root.putArray("tokens");
    root.putArray("certificates");
    return root;
  }

  static ObjectNode tree(Path path) {
    read(path); // refuses a bad file before it is changed
    try {
      return (ObjectNode) JSON.readTree(path.toFile());
    } catch (IOException e) {
      throw new IllegalArgumentException("auth file " + path + ": cannot read it (" + e + ")", e);
    }
  }

  static String pretty(JsonNode root) {
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static ArrayNode grantsJson(List<Grant> grants) {
    ArrayNode a = JSON.createArrayNode();
    for (Grant g : grants) {
      ObjectNode o = a.addObject().put("permission", g.permission().wireName()).put("namespace", g.namespace());
      if (!g.services().equals(Grant.ALL)) {
        o.put("services", g.services());
      }
    }
    return a;
  }

  // --- checks ---

  private static List<Grant> grants(JsonNode holder, String file, String at) {
    List<Grant> grants = new ArrayList<>();
    int i = 0;
    for (JsonNode g : array(holder, "grants", file, at + ".")) {
      String gat = at + ".grants[" + i++ + "]";
      object(g, file, gat);
      only(g, file, gat + ".", Set.of("permission", "namespace", "services"));
      String p = text(g, "permission", file, gat + ".permission");
      Permission permission = Permission.named(p);
      if (permission == null) {
        throw bad(file, gat + ".permission", p, "read, write or admin");
      }
      String namespace = text(g, "namespace", file, gat + ".namespace");
      if (namespace.isEmpty()) {
        throw bad(file, gat + ".namespace", namespace, "a namespace, or * for every namespace");
      }
      String services = g.has("services") ? text(g, "services", file, gat + ".services") : Grant.ALL;
      if (services.isEmpty()) {
        throw bad(file, gat + ".services", services, "a pattern like orders-* or DEFAULT_GROUP@@orders-*, or *");
      }
      grants.add(new Grant(permission, namespace, services));
    }
    return grants;
  }

  private static String name(JsonNode holder, String file, String at, Set<String> names) {
    String name = text(holder, "name", file, at + ".name");
    if (!validName(name)) {
      throw bad(file, at + ".name", name, "1.." + MAX_NAME + " characters of [A-Za-z0-9_.@-]");
    }
    if (!names.add(name)) {
      throw bad(file, at + ".name", name, "a name no other user, token or certificate has");
    }
    return name;
  }

  /** A user's or token's name: 1..64 characters of {@code [A-Za-z0-9_.@-]}. */
  static boolean validName(String name) {
    return !name.isEmpty() && name.length() <= MAX_NAME && name.chars().allMatch(c -> (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '@' || c == '-');
  }

  private static Iterable<JsonNode> array(JsonNode holder, String field, String file) {
    return array(holder, field, file, "");
  }

  private static Iterable<JsonNode> array(JsonNode holder, String field, String file, String at) {
    JsonNode a = holder.path(field);
    if (a.isMissingNode()) {
      return List.of();
    }
    if (!a.isArray()) {
      throw bad(file, at + field, a.toString(), "a JSON array");
    }
    return a;
  }

  private static void object(JsonNode n, String file, String at) {
    if (!n.isObject()) {
      throw bad(file, at, n.toString(), "a JSON object");
    }
  }

  private static String text(JsonNode holder, String field, String file, String at) {
    JsonNode n = holder.path(field);
    if (!n.isTextual()) {
      throw bad(file, at, n.isMissingNode() ? "(missing)" : n.toString(), "a string");
    }
    return n.textValue();
  }

  private static void only(JsonNode n, String file, String at, Set<String> known) {
    for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!known.contains(f)) {
        throw bad(file, at + f, "(present)", "one of " + new java.util.TreeSet<>(known));
      }
    }
  }

  private static IllegalArgumentException bad(String file, String at, String value, String expected) {
    String shown = value.length() > 80 ? value.substring(0, 80) + "..." : value;
    return new IllegalArgumentException("auth file " + file + ": " + at + ": " + shown + " (expected: " + expected + ")");
  }
}
