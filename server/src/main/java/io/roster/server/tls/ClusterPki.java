package io.roster.server.tls;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * {@code java -jar roster-server.jar pki --dir DIR --members [name=]host:port,...}: a cluster's
 * throwaway CA and one certificate per member, as PEM files in DIR, for the peer port's mutual
 * TLS (decision 63):
 *
 * <ul>
 *   <li>{@code ca.crt}: the CA certificate, every member's {@code --peer-tls-ca};
 *   <li>{@code ca.key}: the CA's private key (owner-only), needed only to issue more;
 *   <li>{@code NAME.crt}, {@code NAME.key}: a member's {@code --peer-tls-cert} and {@code
 *       --peer-tls-key}, its certificate naming its host (IP address or DNS name) and serving as TLS
 *       server and client. NAME is the entry's name when it has one ({@code node1=127.0.0.1:9849}),
 *       else its host.
 * </ul>
 *
 * <p>Idempotent: files that exist are kept, and only what is missing is made (a member whose two
 * files were deleted gets a new certificate from the same CA). A kept member certificate that the
 * CA did not sign is an error, as is one file of a pair without the other.
 */
public final class ClusterPki {

  /** The CA's common name. */
  static final String CA_NAME = "roster-cluster-ca";

  private ClusterPki() {}

  /** One member: the name its files take and the host its certificate names. */
  record Member(String name, String host) {}

  /** Runs the command; returns the exit status (0 done, 2 bad arguments or files). */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    Path dir = null;
    List<Member> members = null;
    try {
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        String value;
        String name;
        int eq = a.indexOf('=');
        if (a.startsWith("--") && eq > 0) {
          name = a.substring(2, eq);
          value = a.substring(eq + 1);
        } else if (a.equals("--help") || a.equals("-h")) {
          out.print(usage());
          return 0;
        } else if (a.startsWith("--") && i + 1 < args.length) {
          name = a.substring(2);
          value = args[++i];
        } else {
          throw new IllegalArgumentException("unexpected argument: \"" + a + "\" (expected: --dir DIR --members "
              + "[name=]host:port,...)");
        }
        switch (name) {
          case "dir" -> dir = Path.of(value);
          case "members" -> members = members(value);
          default -> throw new IllegalArgumentException("unknown option: --" + name + " (expected: --dir, --members)");
        }
      }
      if (dir == null || members == null) {
        throw new IllegalArgumentException((dir == null ? "--dir" : "--members") + ": missing (expected: --dir DIR "
            + "--members [name=]host:port,...)");
      }
      make(dir, members, out);
      return 0;
    } catch (IllegalArgumentException | IOException e) {
      err.println("roster pki: " + e.getMessage());
      return 2;
    }
  }

  static String usage() {
    return """
        Usage: java -jar roster-server.jar pki --dir DIR --members [name=]host:port,...

        Makes a cluster's throwaway CA (DIR/ca.crt, DIR/ca.key) and, for each member, a certificate
        naming its host (DIR/NAME.crt, DIR/NAME.key; NAME is the entry's name, else its host), for
        --peer-tls-ca, --peer-tls-cert and --peer-tls-key. Files that exist are kept.
        """;
  }

  /** {@code [name=]host:port,...}, the syntax of the server's {@code --members}. */
  static List<Member> members(String list) {
    Map<String, Member> byName = new LinkedHashMap<>();
    for (String raw : list.split(",", -1)) {
      String entry = raw.trim();
      if (entry.isEmpty()) {
        continue;
      }
      int eq = entry.indexOf('=');
      String address = entry.substring(eq + 1);
      int colon = address.lastIndexOf(':');
      if (eq == 0 || colon <= 0 || !address.substring(colon + 1).matches("[0-9]{1,5}")) {
        throw new IllegalArgumentException("--members: \"" + entry + "\" (expected: host:peerPort or "
            + "name=host:peerPort, e.g. roster1:9849)");
      }
      String host = address.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      String name = eq > 0 ? entry.substring(0, eq) : host;
      if (!name.matches("[A-Za-z0-9._-]+")) {
        throw new IllegalArgumentException("--members: \"" + entry + "\" names the files \"" + name + "\" (expected: "
            + "letters, digits, '.', '_' or '-'; give it a name: name=host:port)");
      }
      Member before = byName.put(name, new Member(name, host));
      if (before != null) {
        throw new IllegalArgumentException("--members: two entries would share the files " + name + ".crt and "
            + name + ".key (expected: a name for each, e.g. node1=" + address + ")");
      }
    }
    if (byName.isEmpty()) {
      throw new IllegalArgumentException("--members: empty (expected: [name=]host:port,...)");
    }
    return List.copyOf(byName.values());
  }

  /** Makes what is missing in {@code dir}, keeps what is there, and says which on {@code out}. */
  static void make(Path dir, List<Member> members, PrintStream out) throws IOException {
    Files.createDirectories(dir);
    Path caCert = dir.resolve("ca.crt");
    Path caKey = dir.resolve("ca.key");
    Pki.@Nullable Authority authority = null;
    X509Certificate ca;
    if (Files.exists(caCert)) {
      ca = Pki.readCertificate(caCert);
      out.println("kept  " + caCert);
    } else if (Files.exists(caKey)) {
      throw new IllegalArgumentException(caKey + " is there without " + caCert + " (expected: both or neither; "
          + "delete " + caKey + " to make a new CA)");
    } else {
      authority = Pki.newAuthority(CA_NAME);
      authority.writePem(caCert, caKey);
      ca = authority.certificate();
      out.println("wrote " + caCert + " and " + caKey + " (a new CA: " + CA_NAME + ")");
    }
    List<Member> missing = new ArrayList<>();
    for (Member m : members) {
      Path cert = dir.resolve(m.name() + ".crt");
      Path key = dir.resolve(m.name() + ".key");
      if (Files.exists(cert) && Files.exists(key)) {
        X509Certificate kept = Pki.readCertificate(cert);
        try {
          kept.verify(ca.getPublicKey());
        } catch (GeneralSecurityException e) {
          throw new IllegalArgumentException(cert + " is not signed by the CA in " + caCert + " (expected: delete "
              + cert + " and " + key + " to issue new ones)", e);
        }
        out.println("kept  " + cert + " and " + key);
      } else if (Files.exists(cert) || Files.exists(key)) {
        throw new IllegalArgumentException((Files.exists(cert) ? key : cert) + " is missing beside "
            + (Files.exists(cert) ? cert : key) + " (expected: both or neither; delete the other to issue anew)");
      } else {
        missing.add(m);
      }
    }
    if (!missing.isEmpty() && authority == null) {
      if (!Files.exists(caKey)) {
        throw new IllegalArgumentException("cannot issue a certificate for " + missing.get(0).name() + ": the CA's "
            + "key " + caKey + " is not there (expected: the ca.key written with " + caCert + ")");
      }
      authority = Pki.loadAuthority(caCert, caKey);
    }
    for (Member m : missing) {
      Path cert = dir.resolve(m.name() + ".crt");
      Path key = dir.resolve(m.name() + ".key");
      Pki.Issued issued = Objects.requireNonNull(authority).issue(m.name(), List.of(m.host()));
      issued.writePem(cert, key);
      out.println("wrote " + cert + " and " + key + " (for " + m.host() + ")");
    }
  }
}
