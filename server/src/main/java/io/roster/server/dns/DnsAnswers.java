package io.roster.server.dns;

import io.roster.server.model.Instance;
import io.roster.server.model.Names;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.xbill.DNS.AAAARecord;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.Address;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.NSRecord;
import org.xbill.DNS.Name;
import org.xbill.DNS.OPTRecord;
import org.xbill.DNS.Opcode;
import org.xbill.DNS.Rcode;
import org.xbill.DNS.Record;
import org.xbill.DNS.SOARecord;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.TextParseException;
import org.xbill.DNS.Type;

/**
 * The answers of Roster's DNS server (docs/dns.md): the registry's services as names under
 * {@code roster.}, read from the registry at each query, nothing cached.
 *
 * <ul>
 *   <li>{@code <service>.roster.}, {@code <service>.<group>.roster.} and {@code
 *       <service>.<group>.<namespace>.roster.} name a service (the default group and the {@code
 *       public} namespace may be left out); a service name with dots is written in the full
 *       form. {@code A} and {@code AAAA} list the addresses of its healthy, enabled instances
 *       (every instance while its protect threshold is reached, as subscribers see it); {@code
 *       SRV} lists each such instance's port and weight, its target a name under {@code
 *       addr.roster.} whose address is in the additional section. A leading {@code _x._tcp.}
 *       is allowed before a name, as SRV clients write it.
 *   <li>{@code <hex>.addr.roster.}: an instance's address, 8 hex digits for IPv4, 32 for IPv6.
 *   <li>{@code ns.roster.}: this server (the zone's NS, and its SOA's primary), at the addresses
 *       {@link DnsServer} listens on.
 *   <li>Names match in any case (RFC 4343), the exact spelling first; answers carry the
 *       question's.
 *   <li>An unknown name is NXDOMAIN, a known one with nothing of the type NOERROR and no
 *       answer; both carry the zone's SOA, whose minimum is the TTL, for negative caching.
 *       Names outside the zone and zone transfers are REFUSED; opcodes other than QUERY are
 *       NOTIMP; both echo the question.
 *   <li>While the server's registry may not be read (a cluster member that has not joined the
 *       group, or is catching up with its log), every name of the zone is SERVFAIL: a resolver
 *       asks another server, and caches nothing.
 * </ul>
 *
 * <p>Thread-safe (reads the registry, holds no state).
 */
public final class DnsAnswers {

  /** The zone every name is under. */
  public static final Name ZONE = name("roster.");
  private static final Name ADDR = name("addr.roster.");
  private static final Name HOST = name("ns.roster.");
  private static final Name ADMIN = name("hostmaster.roster.");
  /** The UDP answer size when the query does not say (RFC 1035). */
  static final int CLASSIC_UDP = 512;
  /** The most this server answers over UDP, whatever the query offers (the DNS flag day's size). */
  static final int MAX_UDP = 1232;

  private final Registry registry;
  private final long ttl;
  private final java.util.function.BooleanSupplier complete;
  private final Readiness readiness;
  private final FoldedNames names;
  private volatile List<InetAddress> nameServer = List.of();

  /**
   * @param complete whether the registry is whole: false while the server warms up after a start
   *     or a member catches up with the log, when a name it lacks may exist (then SERVFAIL, not
   *     an NXDOMAIN resolvers would cache)
   * @param readiness whether the registry may be read at all: SERVFAIL for every name until it may
   */
  public DnsAnswers(Registry registry, Duration ttl, java.util.function.BooleanSupplier complete,
      Readiness readiness) {
    this.readiness = readiness;
    this.registry = registry;
    this.ttl = ttl.toSeconds();
    this.complete = complete;
    this.names = FoldedNames.watching(registry);
  }

  /** An answer's bytes, and what it was for the request metrics (the bytes go straight to a socket). */
  @SuppressWarnings("ArrayRecordComponent")
  public record Answer(byte[] wire, String type, String result) {}

  /**
   * The answer to {@code query} ({@code maxBytes}: the transport's bound; over UDP, the smaller
   * of it and what the query offers), or null for a message that is not a query at all.
   */
  public @Nullable Answer answer(byte[] query, boolean udp) {
    Message q;
    try {
      q = new Message(query);
    } catch (java.io.IOException e) {
      return null; // not even a header to answer: dropped, as resolvers do
    }
    if (q.getHeader().getFlag(Flags.QR)) {
      return null; // a response, never answered: answering one could loop between servers
    }
    Message r = new Message(q.getHeader().getID());
    r.getHeader().setFlag(Flags.QR);
    if (q.getHeader().getFlag(Flags.RD)) {
      r.getHeader().setFlag(Flags.RD);
    }
    OPTRecord opt = q.getOPT();
    int limit = !udp ? 65535 : opt == null ? CLASSIC_UDP : Math.max(CLASSIC_UDP, Math.min(MAX_UDP, opt.getPayloadSize()));
    if (opt != null) {
      r.addRecord(new OPTRecord(MAX_UDP, 0, 0), Section.ADDITIONAL);
    }
    Record question = q.getQuestion();
    if (q.getHeader().getOpcode() != Opcode.QUERY) {
      if (question != null && q.getHeader().getCount(Section.QUESTION) == 1) {
        r.addRecord(question, Section.QUESTION); // echoed, as clients check it (RFC 1035 4.1.2)
      }
      r.getHeader().setOpcode(q.getHeader().getOpcode()); // and the opcode, as RFC 1035 4.1.1 says
      r.getHeader().setRcode(Rcode.NOTIMP);
      return new Answer(r.toWire(limit), "other", "notimp");
    }
    if (question == null || q.getHeader().getCount(Section.QUESTION) != 1) {
      r.getHeader().setRcode(Rcode.FORMERR);
      return new Answer(r.toWire(limit), "other", "formerr");
    }
    r.addRecord(question, Section.QUESTION);
    int type = question.getType();
    String typeLabel = switch (type) {
      case Type.A, Type.AAAA, Type.SRV, Type.ANY -> Type.string(type);
      default -> "other";
    };
    Name name = question.getName();
    if (!name.subdomain(ZONE) || question.getDClass() != DClass.IN || type == Type.AXFR || type == Type.IXFR) {
      // Outside the zone, or a zone transfer: the zone is the registry, read live, never copied.
      r.getHeader().setRcode(Rcode.REFUSED);
      return new Answer(r.toWire(limit), typeLabel, "refused");
    }
    if (readiness.refusal() != null) {
      return servfail(q, question, limit, typeLabel);
    }
    r.getHeader().setFlag(Flags.AA);
    boolean found;
    if (name.equals(ZONE) || name.equals(ADDR)) {
      found = true; // names with names below them: they exist, with no address
      if (name.equals(ZONE) && (type == Type.SOA || type == Type.ANY)) {
        r.addRecord(soa(question), Section.ANSWER);
      }
      if (name.equals(ZONE) && (type == Type.NS || type == Type.ANY)) {
        r.addRecord(new NSRecord(question.getName(), DClass.IN, ttl, HOST), Section.ANSWER);
        for (InetAddress a : nameServer) {
          Record glue = record(HOST, a, Type.ANY);
          if (glue != null) {
            r.addRecord(glue, Section.ADDITIONAL);
          }
        }
      }
    } else if (name.equals(HOST)) {
      found = true; // the zone's name server: this server, at the addresses it listens on
      for (InetAddress a : nameServer) {
        Record rec = record(question.getName(), a, type);
        if (rec != null) {
          r.addRecord(rec, Section.ANSWER);
        }
      }
    } else {
      found = name.subdomain(ADDR) ? answerAddress(r, name, type) : answerService(r, name, type);
    }
    boolean empty = r.getSection(Section.ANSWER).isEmpty();
    if (empty && !complete.getAsBoolean()) {
      // Warming up or catching up: what is missing may only be missing here for now.
      return servfail(q, question, limit, typeLabel);
    }
    if (!found) {
      r.getHeader().setRcode(Rcode.NXDOMAIN);
    }
    if (empty) {
      r.addRecord(soa(), Section.AUTHORITY);
    }
    return new Answer(r.toWire(limit), typeLabel, found ? "ok" : "nxdomain");
  }

  /**
   * The answer to a query over the rate limit that is sent at all: truncated (TC set) and empty,
   * the question echoed, so a real client asks again over TCP; null for what is not a query.
   */
  static byte @Nullable [] slip(byte[] query) {
    Message q;
    try {
      q = new Message(query);
    } catch (java.io.IOException e) {
      return null;
    }
    Record question = q.getQuestion();
    if (q.getHeader().getFlag(Flags.QR) || question == null || q.getHeader().getCount(Section.QUESTION) != 1) {
      return null;
    }
    Message r = new Message(q.getHeader().getID());
    r.getHeader().setFlag(Flags.QR);
    r.getHeader().setFlag(Flags.TC);
    if (q.getHeader().getFlag(Flags.RD)) {
      r.getHeader().setFlag(Flags.RD);
    }
    r.addRecord(question, Section.QUESTION);
    return r.toWire();
  }

  private static Answer servfail(Message q, Record question, int limit, String typeLabel) {
    Message fail = new Message(q.getHeader().getID());
    fail.getHeader().setFlag(Flags.QR);
    fail.getHeader().setRcode(Rcode.SERVFAIL);
    fail.addRecord(question, Section.QUESTION);
    return new Answer(fail.toWire(limit), typeLabel, "servfail");
  }

  private boolean answerAddress(Message r, Name name, int type) {
    if (name.labels() != ADDR.labels() + 1) {
      return false;
    }
    InetAddress a = fromHex(name.getLabelString(0));
    if (a == null) {
      return false;
    }
    Record rec = record(name, a, type);
    if (rec != null) {
      r.addRecord(rec, Section.ANSWER);
    }
    return true;
  }

  private boolean answerService(Message r, Name name, int type) {
    List<String> labels = new ArrayList<>();
    for (int i = 0; i < name.labels() - ZONE.labels(); i++) {
      labels.add(name.getLabelString(i));
    }
    // SRV's _service._proto prefix, when given.
    while (labels.size() > 1 && labels.get(0).startsWith("_")) {
      labels.remove(0);
    }
    ServiceSnapshot state = find(labels);
    if (state == null) {
      return isAbove(labels);
    }
    List<Instance> serving = state.view(Set.of(), true).instances();
    Set<InetAddress> addresses = new LinkedHashSet<>();
    for (Instance i : serving) {
      InetAddress a = literal(i.ip());
      if (type == Type.SRV || type == Type.ANY) {
        Name target = a != null ? addressName(a) : hostName(i.ip());
        if (target != null) {
          r.addRecord(new SRVRecord(name, DClass.IN, ttl, 1, srvWeight(i.weight()), i.port(), target), Section.ANSWER);
          if (a != null) {
            Record extra = record(target, a, Type.ANY);
            if (extra != null && !r.findRecord(extra, Section.ADDITIONAL)) {
              r.addRecord(extra, Section.ADDITIONAL);
            }
          }
        }
      }
      if (a != null) {
        addresses.add(a);
      }
    }
    if (type != Type.SRV) {
      for (InetAddress a : addresses) {
        Record rec = record(name, a, type);
        if (rec != null) {
          r.addRecord(rec, Section.ANSWER);
        }
      }
    }
    return true;
  }

  /**
   * The service the labels name, trying, in order: service.group.namespace (a dotted service
   * name before the last two labels), service.group in {@code public}, and the whole as a
   * service in the default group and namespace; each as written, then in any case (RFC 4343).
   */
  private @Nullable ServiceSnapshot find(List<String> labels) {
    int n = labels.size();
    List<ServiceKey> candidates = new ArrayList<>(3);
    if (n >= 3) {
      candidates.add(key(labels.get(n - 1), labels.get(n - 2), String.join(".", labels.subList(0, n - 2))));
    }
    if (n >= 2) {
      candidates.add(key(Names.DEFAULT_NAMESPACE, labels.get(n - 1), String.join(".", labels.subList(0, n - 1))));
    }
    if (n >= 1) {
      candidates.add(key(Names.DEFAULT_NAMESPACE, Names.DEFAULT_GROUP, String.join(".", labels)));
    }
    for (ServiceKey k : candidates) {
      if (k == null) {
        continue;
      }
      if (registry.stats(k) != null) {
        return registry.snapshot(k);
      }
      ServiceKey folded = names.find(k.namespace(), k.group(), k.name());
      if (folded != null) {
        return registry.snapshot(folded);
      }
    }
    return null;
  }

  /**
   * Whether the labels name a namespace ({@code team.roster.}) or a group of one ({@code
   * pay.team.roster.}) that holds services: names with names below them, which exist (NOERROR,
   * no data), so that resolvers that ask for a name a label at a time reach the services.
   */
  private boolean isAbove(List<String> labels) {
    if (labels.size() == 1) {
      return registry.listServices(labels.get(0), "", 1, 1).total() > 0 || names.holdsServices(labels.get(0), "");
    }
    return labels.size() == 2 && !labels.get(0).isEmpty()
        && (registry.listServices(labels.get(1), labels.get(0), 1, 1).total() > 0
            || names.holdsServices(labels.get(1), labels.get(0)));
  }

  private static @Nullable ServiceKey key(String namespace, String group, String service) {
    try {
      return ServiceKey.of(namespace, group, service);
    } catch (RuntimeException e) {
      return null; // not a name Roster could hold
    }
  }

  private @Nullable Record record(Name name, InetAddress a, int type) {
    if (a instanceof Inet4Address && (type == Type.A || type == Type.ANY)) {
      return new ARecord(name, DClass.IN, ttl, a);
    }
    if (a instanceof Inet6Address && (type == Type.AAAA || type == Type.ANY)) {
      return new AAAARecord(name, DClass.IN, ttl, a);
    }
    return null;
  }

  private SOARecord soa() {
    return new SOARecord(ZONE, DClass.IN, ttl, HOST, ADMIN, 1, 3600, 600, 86400, ttl);
  }

  /** The SOA as the answer to a question for the zone, named as the question wrote it. */
  private SOARecord soa(Record question) {
    return new SOARecord(question.getName(), DClass.IN, ttl, HOST, ADMIN, 1, 3600, 600, 86400, ttl);
  }

  /**
   * The addresses {@code ns.roster.} (the zone's NS and its SOA's primary) answers: those the DNS
   * port listens on, set by {@link DnsServer} once it is bound.
   */
  void nameServer(List<InetAddress> addresses) {
    nameServer = List.copyOf(addresses);
  }

  /** An SRV weight (0..65535) from an instance weight (0..10000): weight × 100, capped. */
  static int srvWeight(double weight) {
    return (int) Math.min(65535, Math.round(weight * 100));
  }

  /** {@code <hex>.addr.roster.} for an address. */
  static Name addressName(InetAddress a) {
    return name(HexFormat.of().formatHex(a.getAddress()) + ".addr.roster.");
  }

  private static @Nullable InetAddress fromHex(String label) {
    if (label.length() != 8 && label.length() != 32) {
      return null;
    }
    try {
      return InetAddress.getByAddress(HexFormat.of().parseHex(label.toLowerCase(Locale.ROOT)));
    } catch (IllegalArgumentException | UnknownHostException e) {
      return null;
    }
  }

  /** An IP literal, never a lookup; null for a host name. */
  private static @Nullable InetAddress literal(String ip) {
    String bare = ip.startsWith("[") && ip.endsWith("]") ? ip.substring(1, ip.length() - 1) : ip;
    try {
      return Address.isDottedQuad(bare) || bare.indexOf(':') >= 0 ? Address.getByAddress(bare) : null;
    } catch (UnknownHostException e) {
      return null;
    }
  }

  private static @Nullable Name hostName(String host) {
    try {
      return Name.fromString(host.endsWith(".") ? host : host + ".");
    } catch (TextParseException e) {
      return null;
    }
  }

  private static Name name(String text) {
    try {
      return Name.fromString(text);
    } catch (TextParseException e) {
      throw new IllegalArgumentException(text, e);
    }
  }
}
