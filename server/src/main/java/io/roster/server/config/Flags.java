package io.roster.server.config;

import io.roster.server.probe.ProbePolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;

/**
 * The flag table: every setting's {@code --name}, its {@code ROSTER_*} variable, what a value
 * looks like, its help line and how its default is shown; the parsing of flags and variables
 * over the defaults, and the --help text ({@link ServerConfig#usage()}). Stateless; the table
 * is built once, when the class loads.
 */
final class Flags {

  private Flags() {}

  /**
   * Parses {@code --name value} / {@code --name=value} flags over {@code ROSTER_NAME}
   * environment variables over the defaults. Unknown flags and bad values are errors naming
   * the setting, the value and what was expected.
   */
  static ServerConfig parse(String[] args, Map<String, String> env) {
    ServerConfig.Builder b = ServerConfig.builder();
    Map<String, String> values = new LinkedHashMap<>();
    for (String name : OPTIONS.keySet()) {
      String envName = "ROSTER_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
      if (env.containsKey(envName)) {
        values.put(name, env.get(envName));
      }
    }
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--")) {
        throw new IllegalArgumentException("unexpected argument: \"" + a + "\" (expected: --name value)");
      }
      String name = a.substring(2);
      String value;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      } else {
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException("--" + name + ": missing value");
        }
        value = args[++i];
      }
      if (!OPTIONS.containsKey(name)) {
        throw new IllegalArgumentException("unknown option: --" + name + " (see --help)");
      }
      values.put(name, value);
    }
    for (Map.Entry<String, String> e : values.entrySet()) {
      Option option = Objects.requireNonNull(OPTIONS.get(e.getKey())); // every name was checked above
      try {
        option.setter.accept(b, e.getValue().trim());
      } catch (IllegalArgumentException ex) {
        throw new IllegalArgumentException("--" + e.getKey() + ": \"" + e.getValue() + "\" (expected: "
            + option.expected + ")", ex);
      }
    }
    return b.build();
  }

  /** The options table for --help. */
  static String usage() {
    StringBuilder sb = new StringBuilder("Usage: java -jar roster-server.jar [--option value]...\n\nOptions (env var, default):\n");
    ServerConfig d = ServerConfig.defaults();
    for (Map.Entry<String, Option> e : OPTIONS.entrySet()) {
      sb.append(String.format("  --%-34s ROSTER_%-34s %s%n      %s%n", e.getKey(),
          e.getKey().toUpperCase(Locale.ROOT).replace('-', '_'), e.getValue().defaultOf.apply(d),
          e.getValue().help));
    }
    sb.append("""

        Modes:
          --help                  this text
          --exit-when-ready       start completely (health SERVING), then stop gracefully: a smoke test,
                                  and how `make build` records the class-data-sharing archive

        Commands:
          pki --dir DIR --members [name=]host:port,...
                                  make a cluster's peer TLS files: a throwaway CA (DIR/ca.crt, ca.key)
                                  and a certificate per member (DIR/NAME.crt, NAME.key); existing files
                                  are kept. See docs/cluster.md.
          check --data-dir DIR    verify a data directory offline (it only reads; a server may run on it):
                                  every checksum, the state file and journal as a pair, the facts they
                                  hold. Exit 0 when sound, 1 with a report. See docs/persistence.md.
          repair --data-dir DIR --truncate-journal-at BYTE | --new-journal | --new-state
                                  with no server running on it, accept a loss the start refused, as its
                                  message names: cut the journal at a damaged record, start an empty
                                  journal after the state file, or start from the journal alone. What it
                                  takes out of use is kept beside it. See docs/persistence.md.
        """);
    return sb.toString();
  }

  /** Parses {@code 5s}, {@code 200ms}, {@code 1m}, {@code 1h}, or a plain number of ms. */
  static Duration parseDuration(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    try {
      if (s.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2).trim()));
      } else if (s.endsWith("s")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(s.substring(0, s.length() - 1).trim()) * 1000));
      } else if (s.endsWith("m")) {
        return Duration.ofSeconds(Long.parseLong(s.substring(0, s.length() - 1).trim()) * 60);
      } else if (s.endsWith("h")) {
        return Duration.ofHours(Long.parseLong(s.substring(0, s.length() - 1).trim()));
      }
      return Duration.ofMillis(Long.parseLong(s));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a duration: \"" + text + "\"", e);
    }
  }

  /** Parses {@code 4194304}, {@code 512k} or {@code 4m} (binary units) into bytes. */
  static long parseSize(String text) {
    String s = text.trim().toLowerCase(Locale.ROOT);
    long unit = 1;
    if (s.endsWith("k") || s.endsWith("kb") || s.endsWith("kib")) {
      unit = 1024;
    } else if (s.endsWith("m") || s.endsWith("mb") || s.endsWith("mib")) {
      unit = 1024 * 1024;
    }
    String digits = s.replaceFirst("[kmib]+$", "").trim();
    try {
      return Math.multiplyExact(Long.parseLong(digits), unit);
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException("not a size: \"" + text + "\"", e);
    }
  }

  /** Renders a size the way {@link #parseSize} reads it. */
  static String formatSize(long bytes) {
    if (bytes > 0 && bytes % (1024 * 1024) == 0) {
      return (bytes / (1024 * 1024)) + "m";
    }
    return bytes > 0 && bytes % 1024 == 0 ? (bytes / 1024) + "k" : Long.toString(bytes);
  }

  /** Renders a duration the way {@link #parseDuration} reads it. */
  static String formatDuration(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
  }

  private static int parseHttpPort(String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "auto" -> ServerConfig.HTTP_PORT_AUTO;
      case "off", "-1" -> ServerConfig.HTTP_PORT_OFF;
      default -> {
        int p = Integer.parseInt(v);
        if (p < 0 || p > 65535) {
          throw new IllegalArgumentException("not a port: " + v);
        }
        yield p;
      }
    };
  }

  private static int parsePort(String v) {
    int p = Integer.parseInt(v);
    if (p < 0 || p > 65535) {
      throw new IllegalArgumentException("not a port: " + v);
    }
    return p;
  }

  private static String formatHttpPort(int p) {
    return p == ServerConfig.HTTP_PORT_AUTO ? "auto" : p == ServerConfig.HTTP_PORT_OFF ? "off" : Integer.toString(p);
  }

  private record Option(String expected, String help, BiConsumer<ServerConfig.Builder, String> setter,
      java.util.function.Function<ServerConfig, String> defaultOf) {}

  private static final Map<String, Option> OPTIONS = new LinkedHashMap<>();

  static {
    OPTIONS.put("host", new Option("an address to bind", "Address to listen on.",
        (b, v) -> b.host(v), c -> c.host()));
    OPTIONS.put("port", new Option("0..65535", "Client gRPC port (Session, Registry, Admin, health, reflection).",
        (b, v) -> b.port(Integer.parseInt(v)), c -> String.valueOf(c.port())));
    OPTIONS.put("data-dir", new Option("a directory, or \"\"", "Where durable state lives (docs/persistence.md): a standalone server's settings, holds and persistent instances (under standalone/), a cluster member's Raft log and snapshots (under raft/). \"\": a standalone server keeps nothing on disk.",
        (b, v) -> b.dataDir(v.isEmpty() ? null : Path.of(v)), c -> c.dataDir() == null ? "(nothing on disk)" : c.dataDir().toString()));
    OPTIONS.put("log-dir", new Option("a directory", "When set, also log to a size-capped rolling file roster.log there.",
        (b, v) -> b.logDir(v.isEmpty() ? null : Path.of(v)), c -> c.logDir() == null ? "(console only)" : c.logDir().toString()));
    OPTIONS.put("audit-log", new Option("a file", "The audit trail's own size-capped rolling file (logins, refusals, operator actions; docs/security.md). It also goes to the log.",
        (b, v) -> b.auditLog(v.isEmpty() ? null : Path.of(v)), c -> c.resolvedAuditLog() == null ? "audit.log in --log-dir (console only without it)" : String.valueOf(c.resolvedAuditLog())));
    OPTIONS.put("keepalive-time", new Option("a duration like 5s", "A session must send a frame (a ping, if nothing else) at least this often; a Nacos connection silent this long is probed (ClientDetectionRequest).",
        (b, v) -> b.keepaliveTime(parseDuration(v)), c -> formatDuration(c.sessions().keepaliveTime())));
    OPTIONS.put("keepalive-timeout", new Option("a duration like 5s", "Grace on top of --keepalive-time: a session or Nacos connection silent for both is ended and its instances removed.",
        (b, v) -> b.keepaliveTimeout(parseDuration(v)), c -> formatDuration(c.sessions().keepaliveTimeout())));
    OPTIONS.put("push-window", new Option("a duration like 20ms", "Changes within this window after a push are merged into the next push.",
        (b, v) -> b.pushWindow(parseDuration(v)), c -> formatDuration(c.sessions().pushWindow())));
    OPTIONS.put("push-ack-timeout", new Option("a duration like 3s", "An unacked push is re-sent (latest state) after this.",
        (b, v) -> b.pushAckTimeout(parseDuration(v)), c -> formatDuration(c.sessions().pushAckTimeout())));
    OPTIONS.put("shutdown-grace", new Option("a duration like 10s", "On SIGTERM, how long sessions get to move before the server stops hard.",
        (b, v) -> b.shutdownGrace(parseDuration(v)), c -> formatDuration(c.shutdownGrace())));
    OPTIONS.put("max-instances-per-connection", new Option("a positive integer",
        "Ephemeral instances the sessions of one client connection (HTTP/2 connection) may own together.",
        (b, v) -> b.maxInstancesPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxInstancesPerConnection())));
    OPTIONS.put("max-subscriptions-per-connection", new Option("a positive integer",
        "Subscriptions the sessions of one client connection may hold together (Watch calls not counted).",
        (b, v) -> b.maxSubscriptionsPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxSubscriptionsPerConnection())));
    OPTIONS.put("max-sessions-per-connection", new Option("a positive integer",
        "Session/Connect streams open at once on one client connection.",
        (b, v) -> b.maxSessionsPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxSessionsPerConnection())));
    OPTIONS.put("max-watches-per-connection", new Option("a positive integer",
        "Registry/Watch calls open at once on one client connection.",
        (b, v) -> b.maxWatchesPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxWatchesPerConnection())));
    OPTIONS.put("max-sessions-per-address", new Option("a positive integer",
        "Session/Connect streams open at once from one remote IP address (all its connections).",
        (b, v) -> b.maxSessionsPerAddress(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxSessionsPerAddress())));
    OPTIONS.put("max-instances-per-address", new Option("a positive integer",
        "Ephemeral instances the sessions of one remote IP address may own together (and, counted apart, the Nacos HTTP API's heartbeat instances registered from one address).",
        (b, v) -> b.maxInstancesPerAddress(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxInstancesPerAddress())));
    OPTIONS.put("max-message-size", new Option("a size in bytes, at least 65536 (suffixes k, m: 4m)",
        "Largest gRPC message the server reads; a larger one ends its call with RESOURCE_EXHAUSTED.",
        (b, v) -> b.maxMessageSize(Math.toIntExact(parseSize(v))), c -> formatSize(c.limits().maxMessageSize())));
    OPTIONS.put("max-service-settings-bytes", new Option("a size in bytes (suffixes k, m: 8m)",
        "Memory all services' settings (UpdateService: protect threshold, metadata) may take together.",
        (b, v) -> b.maxServiceSettingsBytes(parseSize(v)), c -> formatSize(c.limits().maxServiceSettingsBytes())));
    OPTIONS.put("warm-up", new Option("a duration like 30s, at most 1m", "After a start, how long at most clients keep instances a state of this server lacks (their owners may still be reconnecting); it ends sooner once they are back (--warm-up-quiet); 0s turns it off.",
        (b, v) -> b.warmUp(parseDuration(v)), c -> formatDuration(c.sessions().warmUp())));
    OPTIONS.put("warm-up-quiet", new Option("a duration like 5s, at most 1m", "The warm-up ends once no session has opened and nothing has been registered for this long since the last (the reconnect storm is over), within --warm-up; 0s: it lasts the whole --warm-up.",
        (b, v) -> b.warmUpQuiet(parseDuration(v)), c -> formatDuration(c.sessions().warmUpQuiet())));
    OPTIONS.put("max-instances-per-service", new Option("a positive integer",
        "Instances one service may have, whoever registered them.",
        (b, v) -> b.maxInstancesPerService(Integer.parseInt(v)), c -> String.valueOf(c.limits().maxInstancesPerService())));
    OPTIONS.put("max-service-bytes", new Option("a size in bytes, 1k..15m (suffixes k, m: 3m)",
        "Wire bytes of one service's instances: bounds every full push and query answer (keep it under clients' 4 MiB message limit).",
        (b, v) -> b.maxServiceBytes(parseSize(v)), c -> formatSize(c.limits().maxServiceBytes())));
    OPTIONS.put("members", new Option("host:peerPort,host:peerPort,... (this node may be listed too)",
        "The cluster's members by their peer (Raft) addresses, each optionally as id=host:peerPort (the id defaults to host:peerPort and must be the same on every member); empty: a standalone server. See docs/cluster.md.",
        (b, v) -> b.members(v.isEmpty() ? List.of() : List.of(v.split("\\s*,\\s*"))),
        c -> c.cluster().members().isEmpty() ? "(standalone)" : String.join(",", c.cluster().members())));
    OPTIONS.put("node-id", new Option("a name without '@' or ','",
        "Picks this node's entry of --members (by its id, host or host:port); without it, the entry whose port is --peer-port on an address of this machine.",
        (b, v) -> b.nodeId(v), c -> c.cluster().nodeId().isEmpty() ? "(its --members entry)" : c.cluster().nodeId()));
    OPTIONS.put("peer-host", new Option("an address to bind, or 0.0.0.0 for every interface",
        "Address the peer port listens on; default: --host, or, when --host is every interface, the host of this member's own --members entry (where the others reach it). Never every interface unless said.",
        (b, v) -> b.peerHost(v), c -> c.cluster().peerHost().isEmpty() ? "(--host, else its --members host)" : c.cluster().peerHost()));
    OPTIONS.put("peer-port", new Option("0..65535", "Port of the cluster's own traffic (the Raft log); never for clients.",
        (b, v) -> b.peerPort(Integer.parseInt(v)), c -> String.valueOf(c.cluster().peerPort())));
    OPTIONS.put("advertise", new Option("host:port", "Where clients reach this node, as other members suggest it to clients they move; default: its --members host and --port.",
        (b, v) -> b.advertise(v), c -> c.cluster().advertise().isEmpty() ? "(member host:port)" : c.cluster().advertise()));
    OPTIONS.put("group-commit-window", new Option("a duration like 1ms, up to 100ms",
        "Changes from all sessions of a member within this window go to the log as one entry.",
        (b, v) -> b.groupCommitWindow(parseDuration(v)), c -> formatDuration(c.cluster().groupCommitWindow())));
    OPTIONS.put("member-down-after", new Option("a duration like 3s",
        "The leader records a member as down after hearing nothing from it for this long; more than the longest election timeout (1400ms).",
        (b, v) -> b.memberDownAfter(parseDuration(v)), c -> formatDuration(c.cluster().memberDownAfter())));
    OPTIONS.put("member-grace", new Option("a duration like 10s",
        "After a member is down (or restarted), its clients have this long to move before what they registered through it is removed.",
        (b, v) -> b.memberGrace(parseDuration(v)), c -> formatDuration(c.cluster().memberGrace())));
    OPTIONS.put("balance-settle", new Option("a duration like 10s, at least 1s",
        "How long a session must have been on a member before balance may ask it to move to a less loaded one.",
        (b, v) -> b.balanceSettle(parseDuration(v)), c -> formatDuration(c.cluster().balanceSettle())));
    OPTIONS.put("snapshot-every", new Option("a number of log entries, at least 10",
        "A member writes a snapshot of its state every this many log entries and drops the log before it.",
        (b, v) -> b.snapshotEvery(Long.parseLong(v)), c -> String.valueOf(c.cluster().snapshotEvery())));
    OPTIONS.put("http-port", new Option("auto, off or 0..65535",
        "Port of the Nacos v1 HTTP open API (naming half) on --host; auto = --port - 1000 (8848), off = none, 0 = any free port. See docs/nacos-compat.md.",
        (b, v) -> b.httpPort(parseHttpPort(v)), c -> formatHttpPort(c.http().httpPort())));
    OPTIONS.put("http-request-timeout", new Option("a duration like 10s",
        "How long an HTTP request may take to arrive, headers and body, from its first byte; a slower client's connection is closed (a client that sends nothing is closed after 30 s).",
        (b, v) -> b.httpRequestTimeout(parseDuration(v)), c -> formatDuration(c.http().httpRequestTimeout())));
    OPTIONS.put("dns-port", new Option("off or 0..65535",
        "Port of the DNS server (UDP and TCP) on --host answering A, AAAA and SRV for <service>.<group>.<namespace>.roster.; off = none, 0 = any free port. See docs/dns.md.",
        (b, v) -> b.dnsPort(v.equalsIgnoreCase("off") ? ServerConfig.DNS_PORT_OFF : parsePort(v)),
        c -> c.dns().dnsPort() == ServerConfig.DNS_PORT_OFF ? "off" : Integer.toString(c.dns().dnsPort())));
    OPTIONS.put("dns-ttl", new Option("a whole number of seconds like 5s, 0s..3600s",
        "Time to live of the DNS server's answers (and of its negative answers).",
        (b, v) -> b.dnsTtl(parseDuration(v)), c -> formatDuration(c.dns().dnsTtl())));
    OPTIONS.put("dns-rate-limit", new Option("responses a second, 0 = off",
        "UDP answers of the DNS port a second per source /24 (IPv4) or /56 (IPv6); over it, every second answer is sent truncated so real clients retry over TCP, the others dropped. 0 = no limit. See docs/dns.md.",
        (b, v) -> b.dnsRateLimit(Integer.parseInt(v)), c -> Integer.toString(c.dns().dnsRateLimit())));
    OPTIONS.put("restore", new Option("a backup file (GET /roster/v1/admin/backup)",
        "Restores the backup's service settings, persistent instances and holds at start, into a server (or cluster) that holds no durable state yet; otherwise it is not applied, with a WARN. Read and checked before the server listens.",
        (b, v) -> b.restore(v.isEmpty() ? null : Path.of(v)), c -> c.restore() == null ? "(none)" : c.restore().toString()));
    OPTIONS.put("probe-interval", new Option("a duration like 3s, 1s..1m",
        "How often the server probes each persistent instance (TCP or HTTP, as its cluster's health check says).",
        (b, v) -> b.probeInterval(parseDuration(v)), c -> formatDuration(c.probes().probeInterval())));
    OPTIONS.put("probe-timeout", new Option("a duration like 500ms, 50ms up to --probe-interval",
        "A probe that has not connected (TCP) or answered its status line (HTTP) within this fails.",
        (b, v) -> b.probeTimeout(parseDuration(v)), c -> formatDuration(c.probes().probeTimeout())));
    OPTIONS.put("probe-threshold", new Option("1..10",
        "Probes in a row that disagree with a persistent instance's health before it is flipped (and pushed).",
        (b, v) -> b.probeThreshold(Integer.parseInt(v)), c -> String.valueOf(c.probes().probeThreshold())));
    OPTIONS.put("probe-allow", new Option("comma-separated CIDR[:PORT[-PORT]], e.g. 10.0.0.0/8,fd00::/8:8000-8999",
        "Where the server may probe: a persistent instance (or a cluster's check port) outside these networks and ports is refused at registration (INVALID_ARGUMENT / 400), and never probed. Default: everywhere but link-local (169.254.0.0/16, fe80::/10) and cloud metadata addresses; unspecified, multicast and broadcast addresses never. See docs/persistence.md.",
        (b, v) -> b.probeAllow(ProbePolicy.parse(v)), c -> c.probes().probeAllow().listed() ? c.probes().probeAllow().describe() : "(default)"));
    OPTIONS.put("tls-cert", new Option("a PEM file of certificates, the server's own first",
        "Turns TLS on for the client port (Roster and Nacos gRPC) and the HTTP port, with this certificate chain; needs --tls-key. Re-read when it changes: new connections get the new one, open ones stay.",
        (b, v) -> b.tlsCert(v.isEmpty() ? null : Path.of(v)), c -> c.tls().tlsCert() == null ? "(off: plaintext)" : String.valueOf(c.tls().tlsCert())));
    OPTIONS.put("tls-key", new Option("a PEM file with an unencrypted PKCS#8 private key",
        "The private key of --tls-cert's first certificate (-----BEGIN PRIVATE KEY-----). Re-read with it.",
        (b, v) -> b.tlsKey(v.isEmpty() ? null : Path.of(v)), c -> c.tls().tlsKey() == null ? "(off)" : String.valueOf(c.tls().tlsKey())));
    OPTIONS.put("tls-client-ca", new Option("a PEM file of CA certificates",
        "Mutual TLS: clients on both ports must present a certificate signed by one of these CAs. Needs --tls-cert. Re-read when it changes. With --auth-file, a certificate whose SPIFFE ID or DNS name the auth file lists is that identity.",
        (b, v) -> b.tlsClientCa(v.isEmpty() ? null : Path.of(v)), c -> c.tls().tlsClientCa() == null ? "(off: no client certificate asked)" : String.valueOf(c.tls().tlsClientCa())));
    OPTIONS.put("auth-file", new Option("a file written by `java -jar roster-server.jar auth`",
        "Turns auth on: every port asks who the caller is and what it may do, from this file of users, tokens, client certificates and grants (re-read when it changes). See docs/security.md.",
        (b, v) -> b.authFile(v.isEmpty() ? null : Path.of(v)), c -> c.auth().authFile() == null ? "(auth off)" : c.auth().authFile().toString()));
    OPTIONS.put("token-ttl", new Option("a duration like 5h, 1m..168h",
        "How long the access token of a login (Nacos clients, the console) is valid.",
        (b, v) -> b.tokenTtl(parseDuration(v)), c -> formatDuration(c.auth().tokenTtl())));
    OPTIONS.put("peer-tls", new Option("on or off",
        "on: the peer port speaks mutual TLS and takes only peers whose certificate the --peer-tls-ca signed; a member needs the three files below. off: plaintext, and any process that reaches the peer port can act as a member (a WARN says so at start). See docs/cluster.md.",
        (b, v) -> b.peerTls(parseOnOff(v)), c -> c.cluster().peerTls() ? "on" : "off"));
    OPTIONS.put("peer-tls-cert", new Option("a PEM file",
        "This member's certificate (PEM; its issuer chain may follow), presented on both ends of a peer connection: it must name the host the other members reach it at (--members) and serve as TLS server and client.",
        (b, v) -> b.peerTlsCert(v.isEmpty() ? null : Path.of(v)), c -> c.cluster().peerTlsCert() == null ? "(none)" : c.cluster().peerTlsCert().toString()));
    OPTIONS.put("peer-tls-key", new Option("a PEM file",
        "The private key of --peer-tls-cert (PEM, unencrypted PKCS#8, or EC/RSA PRIVATE KEY).",
        (b, v) -> b.peerTlsKey(v.isEmpty() ? null : Path.of(v)), c -> c.cluster().peerTlsKey() == null ? "(none)" : c.cluster().peerTlsKey().toString()));
    OPTIONS.put("peer-tls-ca", new Option("a PEM file",
        "The cluster's CA certificate(s) (PEM): a peer's certificate must be signed by one of them, on both ends.",
        (b, v) -> b.peerTlsCa(v.isEmpty() ? null : Path.of(v)), c -> c.cluster().peerTlsCa() == null ? "(none)" : c.cluster().peerTlsCa().toString()));
  }

  private static boolean parseOnOff(String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "on", "true" -> true;
      case "off", "false" -> false;
      default -> throw new IllegalArgumentException("not on or off: " + v);
    };
  }

  /** Names of every option, in help order. */
  static List<String> optionNames() {
    return new ArrayList<>(OPTIONS.keySet());
  }
}
