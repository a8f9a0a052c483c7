package io.roster.server.probe;

import io.grpc.netty.shaded.io.netty.util.NetUtil;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Which targets the server may probe (decision 81): a persistent instance is a request to the
 * server to connect to an address and port a writer chose, and its health flag tells that writer
 * whether something answered there. The policy says where that may go.
 *
 * <ul>
 *   <li>Never: an unspecified address ({@code 0.0.0.0/8}, {@code ::}, which reach the server's
 *       own host), multicast ({@code 224.0.0.0/4}, {@code ff00::/8}) or broadcast
 *       ({@code 255.255.255.255}), whatever {@code --probe-allow} says: none of them is an
 *       instance.
 *   <li>Without {@code --probe-allow}: every other address and port, except link-local addresses
 *       ({@code 169.254.0.0/16}, {@code fe80::/10}: among them the cloud metadata services at
 *       {@code 169.254.169.254}) and the other cloud metadata addresses ({@code
 *       100.100.100.200}, {@code fd00:ec2::254}). Loopback is allowed: a server and its instances
 *       on one host (a developer's machine, {@code make cluster}, the tests) probe there.
 *   <li>With {@code --probe-allow CIDR[:PORT[-PORT]],...}: only the addresses and ports listed
 *       (a rule without ports allows every port of its addresses), link-local and loopback
 *       included only when listed.
 * </ul>
 *
 * <p>IPv4-mapped IPv6 addresses ({@code ::ffff:169.254.169.254}) are judged as the IPv4 address
 * they carry. A host name is never probed (decision 74), so the policy has nothing to say about
 * one. Immutable and thread-safe.
 */
public final class ProbePolicy {

  /** The flag that sets the policy. */
  public static final String FLAG = "--probe-allow";

  private static final List<Rule> NEVER = List.of(rule("0.0.0.0/8"), rule("::/128"), rule("224.0.0.0/4"),
      rule("ff00::/8"), rule("255.255.255.255/32"));
  private static final List<Rule> REFUSED_BY_DEFAULT = List.of(rule("169.254.0.0/16"), rule("fe80::/10"),
      rule("100.100.100.200/32"), rule("fd00:ec2::254/128"));

  /** The policy without {@code --probe-allow}. */
  public static final ProbePolicy DEFAULT = new ProbePolicy(null, "");

  /** What a refusal blames: the address whatever the port, or the port at that address. */
  public enum Blame {
    ADDRESS,
    PORT
  }

  /**
   * Why a target is refused.
   *
   * @param blame whether the address is refused on every port, or only this port
   * @param reason what refuses it, e.g. {@code link-local (169.254.0.0/16), refused unless --probe-allow lists it}
   */
  public record Refusal(Blame blame, String reason) {}

  private final @Nullable List<Rule> allowed;
  private final String text;

  private ProbePolicy(@Nullable List<Rule> allowed, String text) {
    this.allowed = allowed;
    this.text = text;
  }

  /**
   * The policy of {@code --probe-allow VALUE}: comma-separated {@code CIDR[:PORT[-PORT]]}, e.g.
   * {@code 10.0.0.0/8,fd00::/8:8000-8999}; empty is {@link #DEFAULT}.
   *
   * @throws IllegalArgumentException naming the flag, the entry and what was expected
   */
  public static ProbePolicy parse(String value) {
    if (value.isBlank()) {
      return DEFAULT;
    }
    List<Rule> rules = new ArrayList<>();
    for (String entry : value.split(",", -1)) {
      String e = entry.strip();
      try {
        rules.add(Rule.parse(e));
      } catch (IllegalArgumentException ex) {
        throw new IllegalArgumentException(FLAG + ": \"" + e + "\" " + ex.getMessage()
            + " (expected: CIDR[:PORT[-PORT]],... e.g. 10.0.0.0/8,192.168.1.0/24:8000-8999,fd00::/8)", ex);
      }
    }
    return new ProbePolicy(List.copyOf(rules), value.strip());
  }

  /** Whether {@code --probe-allow} was given. */
  public boolean listed() {
    return allowed != null;
  }

  /** The flag's value, or a description of the default; for messages. */
  public String describe() {
    return allowed == null ? "default: every address but link-local, cloud metadata, unspecified, multicast" : text;
  }

  /**
   * Why a probe of {@code ip}:{@code port} is refused, or null when it may go (or {@code ip} is no
   * IP literal, and so never probed).
   */
  public @Nullable Refusal refusal(String ip, int port) {
    byte[] address = literal(ip);
    if (address == null) {
      return null;
    }
    for (Rule r : NEVER) {
      if (r.contains(address)) {
        return new Refusal(Blame.ADDRESS, "never probed (" + r + ": unspecified, multicast or broadcast)");
      }
    }
    if (allowed == null) {
      for (Rule r : REFUSED_BY_DEFAULT) {
        if (r.contains(address)) {
          return new Refusal(Blame.ADDRESS, "refused by default (" + r + ", link-local or a cloud metadata service) "
              + "unless " + FLAG + " lists it");
        }
      }
      return null;
    }
    boolean addressListed = false;
    for (Rule r : allowed) {
      if (r.contains(address)) {
        if (r.allowsPort(port)) {
          return null;
        }
        addressListed = true;
      }
    }
    return addressListed ? new Refusal(Blame.PORT, "port " + port + " is not listed for this address in " + FLAG + " " + text)
        : new Refusal(Blame.ADDRESS, "not in " + FLAG + " " + text);
  }

  /** The bytes of an IP literal, an IPv4-mapped IPv6 address as its IPv4 one; null for anything else. */
  static byte @Nullable [] literal(String ip) {
    byte[] bytes = NetUtil.createByteArrayFromIpAddressString(ip);
    if (bytes == null) {
      return null;
    }
    if (bytes.length == 16 && isMapped(bytes)) {
      return Arrays.copyOfRange(bytes, 12, 16);
    }
    return bytes;
  }

  private static boolean isMapped(byte[] b) {
    for (int i = 0; i < 10; i++) {
      if (b[i] != 0) {
        return false;
      }
    }
    return b[10] == (byte) 0xff && b[11] == (byte) 0xff;
  }

  private static Rule rule(String cidr) {
    return Rule.parse(cidr);
  }

  @Override
  public String toString() {
    return describe();
  }

  /** A network and a port range. */
  private static final class Rule {
    private final byte[] network;
    private final int prefix;
    private final int lowPort;
    private final int highPort;
    private final String text;

    private Rule(byte[] network, int prefix, int lowPort, int highPort, String text) {
      this.network = network;
      this.prefix = prefix;
      this.lowPort = lowPort;
      this.highPort = highPort;
      this.text = text;
    }

    /** {@code CIDR[:PORT[-PORT]]}. */
    static Rule parse(String entry) {
      int slash = entry.indexOf('/');
      if (slash <= 0) {
        throw new IllegalArgumentException("is not a CIDR block (an address, '/', a prefix length)");
      }
      byte[] network = NetUtil.createByteArrayFromIpAddressString(entry.substring(0, slash));
      if (network == null) {
        throw new IllegalArgumentException("does not start with an IPv4 or IPv6 address");
      }
      if (network.length == 16 && isMapped(network)) {
        throw new IllegalArgumentException("is an IPv4-mapped network: write it as IPv4");
      }
      String rest = entry.substring(slash + 1);
      int colon = rest.indexOf(':');
      String length = colon < 0 ? rest : rest.substring(0, colon);
      int bits = network.length * 8;
      int prefix;
      try {
        prefix = Integer.parseInt(length);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("has no prefix length 0.." + bits + " after '/'", e);
      }
      if (prefix < 0 || prefix > bits || !length.equals(Integer.toString(prefix))) {
        throw new IllegalArgumentException("has prefix length " + length + ", not 0.." + bits);
      }
      int low = 1;
      int high = 65535;
      if (colon >= 0) {
        String ports = rest.substring(colon + 1);
        int dash = ports.indexOf('-');
        low = port(dash < 0 ? ports : ports.substring(0, dash));
        high = dash < 0 ? low : port(ports.substring(dash + 1));
        if (low > high) {
          throw new IllegalArgumentException("has the port range " + ports + ", whose start is above its end");
        }
      }
      for (int bit = prefix; bit < bits; bit++) {
        if ((network[bit / 8] & (0x80 >> (bit % 8))) != 0) {
          throw new IllegalArgumentException("has bits set past its prefix length " + prefix
              + " (the network is " + network(network, prefix) + ")");
        }
      }
      return new Rule(network, prefix, low, high, entry.toLowerCase(Locale.ROOT));
    }

    private static int port(String text) {
      try {
        int p = Integer.parseInt(text);
        if (p >= 1 && p <= 65535) {
          return p;
        }
      } catch (NumberFormatException e) {
        // below
      }
      throw new IllegalArgumentException("has the port \"" + text + "\", not 1..65535");
    }

    private static String network(byte[] address, int prefix) {
      byte[] masked = address.clone();
      for (int bit = prefix; bit < masked.length * 8; bit++) {
        masked[bit / 8] &= (byte) ~(0x80 >> (bit % 8));
      }
      return NetUtil.bytesToIpAddress(masked) + "/" + prefix;
    }

    boolean contains(byte[] address) {
      if (address.length != network.length) {
        return false;
      }
      for (int bit = 0; bit < prefix; bit++) {
        int mask = 0x80 >> (bit % 8);
        if ((address[bit / 8] & mask) != (network[bit / 8] & mask)) {
          return false;
        }
      }
      return true;
    }

    boolean allowsPort(int port) {
      return port >= lowPort && port <= highPort;
    }

    @Override
    public String toString() {
      return text;
    }
  }
}
