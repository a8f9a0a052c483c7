package io.roster.server.auth;

import java.security.cert.Certificate;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

/**
 * The names a client certificate proves an identity with (decision 80): a SPIFFE ID in a URI
 * subject alternative name ({@code spiffe://corp.example/ns/prod/sa/frontend}) or a DNS name in a
 * DNS one ({@code frontend.corp.example}). The auth file's {@code certificates} entries name one
 * each ({@link #problem} checks them); {@link #sans} reads a certificate's.
 *
 * <p>An entry's SPIFFE ID may end in {@code /*}: every SPIFFE ID under that path. Only IDs that
 * are valid SPIFFE IDs are matched against such a prefix (lower-case trust domain, path segments
 * of letters, digits, {@code . _ -}, no {@code .} or {@code ..} segment, no percent-encoding, query
 * or fragment), so a prefix ends where a path segment ends and no spelling of a name can climb
 * out of it. DNS names are compared without regard to case; nothing else is normalised. Plain
 * Java; stateless.
 */
public final class ClientCertificates {

  /** What a certificate entry's {@code san} may be, for refusals. */
  static final String EXPECTED = "a SPIFFE ID like spiffe://corp.example/ns/prod/sa/frontend (a URI SAN; ending in /* "
      + "for every ID under that path) or a DNS name like frontend.corp.example (a DNS SAN)";

  /** The URI scheme of SPIFFE IDs. */
  static final String SPIFFE = "spiffe://";
  /** A SPIFFE ID's length limit, in characters. */
  static final int MAX_SPIFFE_ID = 2048;
  private static final int MAX_TRUST_DOMAIN = 255;
  private static final int MAX_DNS_NAME = 253;

  private static final Pattern TRUST_DOMAIN = Pattern.compile("[a-z0-9._-]+");
  private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._-]+");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");
  /** {@code GeneralName} tags, RFC 5280. */
  private static final int DNS_NAME = 2;
  private static final int URI = 6;

  private ClientCertificates() {}

  /**
   * The chain the TLS layer verified for {@code session}'s peer, leaf first; empty when there is no
   * session (plaintext) or the peer presented no certificate. With {@code --tls-client-ca} every
   * handshake checks the chain against those CAs before a session exists, so what this returns is
   * what they vouch for; no header or message content ever becomes a certificate here.
   */
  public static List<X509Certificate> of(@Nullable SSLSession session) {
    if (session == null) {
      return List.of();
    }
    Certificate[] chain;
    try {
      chain = session.getPeerCertificates();
    } catch (SSLPeerUnverifiedException e) {
      return List.of();
    }
    List<X509Certificate> x509 = new ArrayList<>(chain.length);
    for (Certificate c : chain) {
      if (c instanceof X509Certificate x) {
        x509.add(x);
      }
    }
    return List.copyOf(x509);
  }

  /** A certificate's subject alternative names that can map to an identity, as {@code URI:...} and {@code DNS:...}. */
  record Sans(List<String> uris, List<String> dnsNames) {
    /** How many SANs a message lists. */
    static final int SHOWN = 8;

    Sans {
      uris = List.copyOf(uris);
      dnsNames = List.copyOf(dnsNames);
    }

    boolean isEmpty() {
      return uris.isEmpty() && dnsNames.isEmpty();
    }

    /**
     * {@code URI:spiffe://..., DNS:frontend...}, as openssl writes them, for messages: at most {@link
     * #SHOWN} of them, each cut at 200 characters, so that a refusal stays small whatever the
     * certificate holds.
     */
    @Override
    public String toString() {
      List<String> all = new ArrayList<>();
      uris.forEach(u -> all.add("URI:" + shorten(u)));
      dnsNames.forEach(d -> all.add("DNS:" + shorten(d)));
      return all.size() <= SHOWN ? String.join(", ", all)
          : String.join(", ", all.subList(0, SHOWN)) + " and " + (all.size() - SHOWN) + " more";
    }

    private static String shorten(String s) {
      return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
  }

  /** The URI and DNS subject alternative names of {@code leaf} (none when it has none or they cannot be read). */
  static Sans sans(X509Certificate leaf) {
    Collection<List<?>> names;
    try {
      names = leaf.getSubjectAlternativeNames();
    } catch (CertificateParsingException e) {
      return new Sans(List.of(), List.of());
    }
    List<String> uris = new ArrayList<>();
    List<String> dns = new ArrayList<>();
    if (names != null) {
      for (List<?> n : names) {
        if (n.size() >= 2 && n.get(0) instanceof Integer tag && n.get(1) instanceof String value) {
          if (tag == URI) {
            uris.add(value);
          } else if (tag == DNS_NAME) {
            dns.add(value);
          }
        }
      }
    }
    return new Sans(uris, dns);
  }

  /**
   * Why {@code san} cannot be a certificate entry's {@code san} (what is expected), or null when
   * it can: a SPIFFE ID (optionally ending in {@code /*}) or a DNS name.
   */
  static @Nullable String problem(String san) {
    if (san.startsWith(SPIFFE)) {
      if (isPrefix(san)) {
        String id = san.substring(0, san.length() - 2);
        return validSpiffeId(id) || isTrustDomainOnly(id) ? null : EXPECTED;
      }
      return validSpiffeId(san) ? null : EXPECTED;
    }
    return validDnsName(san.toLowerCase(Locale.ROOT)) ? null : EXPECTED;
  }

  /** Whether an entry's {@code san} names every SPIFFE ID under a path ({@code spiffe://td/path/*}). */
  static boolean isPrefix(String san) {
    return san.startsWith(SPIFFE) && san.endsWith("/*");
  }

  /** The key an entry's valid {@code san} is looked up by: DNS names in lower case, SPIFFE IDs as written. */
  static String key(String san) {
    return san.startsWith(SPIFFE) ? san : san.toLowerCase(Locale.ROOT);
  }

  /** The key of a DNS SAN a certificate presents. */
  static String dnsKey(String dnsName) {
    return dnsName.toLowerCase(Locale.ROOT);
  }

  /**
   * Whether {@code id} is a SPIFFE ID: {@code spiffe://TRUST-DOMAIN/PATH}, trust domain of {@code
   * [a-z0-9._-]}, a path of one or more segments of {@code [A-Za-z0-9._-]}, none {@code .} or
   * {@code ..}, no trailing slash, at most 2,048 characters.
   */
  static boolean validSpiffeId(String id) {
    if (!id.startsWith(SPIFFE) || id.length() > MAX_SPIFFE_ID) {
      return false;
    }
    String rest = id.substring(SPIFFE.length());
    int slash = rest.indexOf('/');
    if (slash <= 0 || !validTrustDomain(rest.substring(0, slash))) {
      return false;
    }
    String path = rest.substring(slash + 1);
    if (path.isEmpty()) {
      return false;
    }
    for (String segment : path.split("/", -1)) {
      if (!SEGMENT.matcher(segment).matches() || segment.equals(".") || segment.equals("..")) {
        return false;
      }
    }
    return true;
  }

  private static boolean isTrustDomainOnly(String id) {
    String rest = id.substring(SPIFFE.length());
    return rest.indexOf('/') < 0 && validTrustDomain(rest);
  }

  private static boolean validTrustDomain(String domain) {
    return domain.length() <= MAX_TRUST_DOMAIN && TRUST_DOMAIN.matcher(domain).matches();
  }

  /** Whether {@code name} (lower case) is a DNS name: dot-separated labels of letters, digits and inner hyphens. */
  static boolean validDnsName(String name) {
    if (name.isEmpty() || name.length() > MAX_DNS_NAME) {
      return false;
    }
    for (String label : name.split("\\.", -1)) {
      if (!DNS_LABEL.matcher(label).matches()) {
        return false;
      }
    }
    return true;
  }
}
