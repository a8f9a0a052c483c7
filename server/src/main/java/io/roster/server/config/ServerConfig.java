package io.roster.server.config;

import io.roster.server.probe.ProbePolicy;
import io.roster.server.tls.TlsFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * Every server setting, immutable. Built from command-line flags, then {@code ROSTER_*}
 * environment variables, then the defaults below (a flag wins over the environment).
 * The table in README.md lists the same settings; {@link #usage()} prints it.
 */
public record ServerConfig(
    String host,
    int port,
    @Nullable Path dataDir,
    @Nullable Path logDir,
    @Nullable Path auditLog,
    Duration keepaliveTime,
    Duration keepaliveTimeout,
    Duration pushWindow,
    Duration pushAckTimeout,
    Duration shutdownGrace,
    int maxInstancesPerConnection,
    int maxSubscriptionsPerConnection,
    int maxSessionsPerConnection,
    int maxWatchesPerConnection,
    int maxSessionsPerAddress,
    int maxInstancesPerAddress,
    int maxMessageSize,
    long maxServiceSettingsBytes,
    Duration warmUp,
    Duration warmUpQuiet,
    int maxInstancesPerService,
    long maxServiceBytes,
    String nodeId,
    String peerHost,
    int peerPort,
    List<String> members,
    String advertise,
    Duration groupCommitWindow,
    Duration memberDownAfter,
    Duration memberGrace,
    Duration balanceSettle,
    long snapshotEvery,
    int httpPort,
    Duration httpRequestTimeout,
    @Nullable Path tlsCert,
    @Nullable Path tlsKey,
    @Nullable Path tlsClientCa,
    @Nullable Path authFile,
    Duration tokenTtl,
    boolean peerTls,
    @Nullable Path peerTlsCert,
    @Nullable Path peerTlsKey,
    @Nullable Path peerTlsCa,
    int dnsPort,
    Duration dnsTtl,
    int dnsRateLimit,
    Duration probeInterval,
    Duration probeTimeout,
    int probeThreshold,
    ProbePolicy probeAllow,
    @Nullable Path restore) {

  /** {@code --dns-port off}: no DNS server (the default). */
  public static final int DNS_PORT_OFF = -1;

  /** The shortest {@code --balance-settle}. */
  public static final Duration MIN_BALANCE_SETTLE = Duration.ofSeconds(1);

  /** {@code --http-port auto}: the client port − 1000 (8848 beside 9848), as Nacos apps expect. */
  public static final int HTTP_PORT_AUTO = -2;
  /** {@code --http-port off}: no Nacos v1 HTTP listener. */
  public static final int HTTP_PORT_OFF = -1;

  /**
   * The largest {@code --max-service-bytes}: the Java SDK accepts messages of up to 16 MiB, and
   * a full push is the service's bytes plus a small header (docs/decisions.md, record 21).
   */
  public static final long MAX_SERVICE_BYTES_CEILING = 15L * 1024 * 1024;

  public ServerConfig {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(peerHost, "peerHost");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 0..65535, 0 = any free port)");
    }
    positive("keepalive-time", keepaliveTime);
    positive("keepalive-timeout", keepaliveTimeout);
    positive("http-request-timeout", httpRequestTimeout);
    if (dnsPort < DNS_PORT_OFF || dnsPort > 65535) {
      throw new IllegalArgumentException("dns-port: " + dnsPort + " (expected: off or 0..65535)");
    }
    if (dnsTtl.isNegative() || dnsTtl.toSeconds() > 3600 || dnsTtl.toNanosPart() != 0) {
      throw new IllegalArgumentException("dns-ttl: " + formatDuration(dnsTtl)
          + " (expected: whole seconds, 0s..3600s)");
    }
    if (dnsRateLimit < 0) {
      throw new IllegalArgumentException("dns-rate-limit: " + dnsRateLimit + " (expected: >= 0, 0 = off)");
    }
    if (probeInterval.compareTo(Duration.ofSeconds(1)) < 0 || probeInterval.compareTo(Duration.ofMinutes(1)) > 0) {
      throw new IllegalArgumentException("probe-interval: " + formatDuration(probeInterval) + " (expected: 1s..1m)");
    }
    if (probeTimeout.compareTo(Duration.ofMillis(50)) < 0 || probeTimeout.compareTo(probeInterval) > 0) {
      throw new IllegalArgumentException("probe-timeout: " + formatDuration(probeTimeout)
          + " (expected: 50ms up to --probe-interval, " + formatDuration(probeInterval) + ")");
    }
    if (probeThreshold < 1 || probeThreshold > 10) {
      throw new IllegalArgumentException("probe-threshold: " + probeThreshold + " (expected: 1..10)");
    }
    notNegative("push-window", pushWindow);
    positive("push-ack-timeout", pushAckTimeout);
    notNegative("shutdown-grace", shutdownGrace);
    notNegative("warm-up", warmUp);
    if (warmUp.compareTo(MAX_WARM_UP) > 0) {
      throw new IllegalArgumentException("warm-up: " + formatDuration(warmUp) + " (expected: 0s.." + formatDuration(MAX_WARM_UP) + ")");
    }
    notNegative("warm-up-quiet", warmUpQuiet);
    if (warmUpQuiet.compareTo(MAX_WARM_UP) > 0) {
      throw new IllegalArgumentException("warm-up-quiet: " + formatDuration(warmUpQuiet) + " (expected: 0s.."
          + formatDuration(MAX_WARM_UP) + ")");
    }
    if (maxInstancesPerConnection < 1) {
      throw new IllegalArgumentException("max-instances-per-connection: " + maxInstancesPerConnection + " (expected: >= 1)");
    }
    atLeastOne("max-subscriptions-per-connection", maxSubscriptionsPerConnection);
    atLeastOne("max-sessions-per-connection", maxSessionsPerConnection);
    atLeastOne("max-watches-per-connection", maxWatchesPerConnection);
    atLeastOne("max-sessions-per-address", maxSessionsPerAddress);
    atLeastOne("max-instances-per-address", maxInstancesPerAddress);
    if (maxMessageSize < 64 * 1024) {
      throw new IllegalArgumentException("max-message-size: " + maxMessageSize + " (expected: >= 65536 bytes)");
    }
    if (maxServiceSettingsBytes < 0) {
      throw new IllegalArgumentException("max-service-settings-bytes: " + maxServiceSettingsBytes + " (expected: >= 0)");
    }
    if (maxInstancesPerService < 1) {
      throw new IllegalArgumentException("max-instances-per-service: " + maxInstancesPerService + " (expected: >= 1)");
    }
    if (maxServiceBytes < 1024 || maxServiceBytes > MAX_SERVICE_BYTES_CEILING) {
      throw new IllegalArgumentException("max-service-bytes: " + maxServiceBytes + " (expected: 1024.."
          + MAX_SERVICE_BYTES_CEILING + ", i.e. 1k..15m)");
    }
    Objects.requireNonNull(nodeId, "nodeId");
    if (nodeId.contains("@") || nodeId.contains(",") || nodeId.length() > 128) {
      throw new IllegalArgumentException("node-id: \"" + nodeId + "\" (expected: at most 128 characters, no '@' or ',')");
    }
    if (peerPort < 0 || peerPort > 65535) {
      throw new IllegalArgumentException("peer-port: " + peerPort + " (expected: 0..65535)");
    }
    members = List.copyOf(members);
    if (dataDir == null && !members.isEmpty()) {
      throw new IllegalArgumentException("data-dir: \"\" (expected: a directory; a cluster member keeps its Raft log "
          + "there, only a standalone server may keep nothing on disk)");
    }
    for (String m : members) {
      String address = m.substring(m.indexOf('=') + 1);
      int colon = address.lastIndexOf(':');
      if (colon <= 0 || !address.substring(colon + 1).matches("[0-9]{1,5}") || m.contains("@")
          || m.indexOf('=') == 0) {
        throw new IllegalArgumentException("members: \"" + m + "\" (expected: host:peerPort, e.g. roster1:9849, or "
            + "id=host:peerPort; no '@')");
      }
    }
    Objects.requireNonNull(advertise, "advertise");
    positive("group-commit-window", groupCommitWindow);
    if (tokenTtl.compareTo(Duration.ofMinutes(1)) < 0 || tokenTtl.compareTo(Duration.ofDays(7)) > 0) {
      throw new IllegalArgumentException("token-ttl: " + formatDuration(tokenTtl) + " (expected: 1m..168h)");
    }
    if (groupCommitWindow.compareTo(Duration.ofMillis(100)) > 0) {
      throw new IllegalArgumentException("group-commit-window: " + formatDuration(groupCommitWindow)
          + " (expected: up to 100ms)");
    }
    positive("member-down-after", memberDownAfter);
    if (memberDownAfter.compareTo(ELECTION_TIMEOUT_MAX) <= 0) {
      throw new IllegalArgumentException("member-down-after: " + formatDuration(memberDownAfter) + " (expected: more "
          + "than " + formatDuration(ELECTION_TIMEOUT_MAX) + ", the longest election timeout: a member is not recorded "
          + "down, nor cut off, before an election could have replaced its leader)");
    }
    notNegative("member-grace", memberGrace);
    if (balanceSettle.compareTo(MIN_BALANCE_SETTLE) < 0) {
      throw new IllegalArgumentException("balance-settle: " + formatDuration(balanceSettle) + " (expected: at least "
          + formatDuration(MIN_BALANCE_SETTLE) + ": a session that has just moved here may still be redoing its "
          + "registrations, and must not be moved again meanwhile)");
    }
    if (snapshotEvery < 10) {
      throw new IllegalArgumentException("snapshot-every: " + snapshotEvery + " (expected: >= 10 log entries)");
    }
    if (httpPort < HTTP_PORT_AUTO || httpPort > 65535) {
      throw new IllegalArgumentException("http-port: " + httpPort
          + " (expected: auto, off or 0..65535, 0 = any free port)");
    }
    if (httpPort == HTTP_PORT_AUTO && port > 0 && port <= 1000) {
      throw new IllegalArgumentException("http-port: auto needs --port above 1000 (it is --port - 1000), but "
          + "--port is " + port + " (expected: a port, or off)");
    }
    if ((tlsCert == null) != (tlsKey == null)) {
      throw new IllegalArgumentException(tlsCert == null
          ? "tls-key: " + tlsKey + " given without --tls-cert (expected: both, or neither)"
          : "tls-cert: " + tlsCert + " given without --tls-key (expected: both, or neither)");
    }
    if (tlsClientCa != null && tlsCert == null) {
      throw new IllegalArgumentException("tls-client-ca: " + tlsClientCa
          + " given without --tls-cert and --tls-key (expected: client certificates are asked for over TLS only)");
    }
    checkPeerTls(members, peerTls, peerTlsCert, peerTlsKey, peerTlsCa);
  }

  /** The TLS files of the client and HTTP ports, or null when they speak plaintext. */
  public @Nullable TlsFiles tls() {
    return tlsCert == null || tlsKey == null ? null : new TlsFiles(tlsCert, tlsKey, tlsClientCa);
  }

  /**
   * The peer port is members-only by default (decision 63): a cluster member needs all three peer
   * TLS files, or {@code --peer-tls off} said outright; a standalone server has no peer port.
   * Whether the files hold what they should is checked at start (cluster.PeerTls).
   */
  private static void checkPeerTls(List<String> members, boolean on, @Nullable Path cert, @Nullable Path key,
      @Nullable Path ca) {
    Map<String, @Nullable Path> files = new LinkedHashMap<>();
    files.put("peer-tls-cert", cert);
    files.put("peer-tls-key", key);
    files.put("peer-tls-ca", ca);
    List<String> given = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    files.forEach((name, path) -> (path == null ? missing : given).add(name));
    if (members.isEmpty()) {
      if (!given.isEmpty()) {
        throw new IllegalArgumentException(given.get(0) + ": " + files.get(given.get(0)) + " given, but a standalone "
            + "server (no --members) has no peer port (expected: peer TLS files only with --members)");
      }
      return;
    }
    if (!on) {
      return; // said outright; ClusterNode warns at start
    }
    if (given.isEmpty()) {
      throw new IllegalArgumentException("members: a cluster member's peer port takes only other members, by mutual "
          + "TLS: give --peer-tls-cert, --peer-tls-key and --peer-tls-ca (PEM files; `java -jar roster-server.jar "
          + "pki` makes a cluster's), or --peer-tls off to let any process that reaches the peer port act as a "
          + "member (docs/cluster.md)");
    }
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(missing.get(0) + ": missing, while --" + String.join(" and --", given)
          + (given.size() == 1 ? " is" : " are") + " given (expected: --peer-tls-cert, --peer-tls-key and "
          + "--peer-tls-ca together, or --peer-tls off)");
    }
  }

  /**
   * The port the Nacos v1 HTTP API listens on: {@code --port - 1000} for {@code auto} (0, any
   * free port, when {@code --port} is 0), or -1 when it is off.
   */
  public int resolvedHttpPort() {
    if (httpPort == HTTP_PORT_AUTO) {
      return port == 0 ? 0 : port - 1000;
    }
    return httpPort;
  }

  private static int parseHttpPort(String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "auto" -> HTTP_PORT_AUTO;
      case "off", "-1" -> HTTP_PORT_OFF;
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
    return p == HTTP_PORT_AUTO ? "auto" : p == HTTP_PORT_OFF ? "off" : Integer.toString(p);
  }

  private static void atLeastOne(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 1)");
    }
  }

  /**
   * The audit trail's file: {@code --audit-log}, else {@code audit.log} in {@code --log-dir};
   * null when neither is set (the trail then goes to the console's log only).
   */
  public @Nullable Path resolvedAuditLog() {
    return auditLog != null ? auditLog : logDir != null ? logDir.resolve("audit.log") : null;
  }

  /** Whether this server is a member of a cluster ({@code --members} given). */
  public boolean clustered() {
    return !members.isEmpty();
  }

  /**
   * The shortest time a cluster member waits without hearing from its leader before it stands
   * for election (Ratis's election timeout; decision 87). The leader's heartbeats go every half.
   */
  public static final Duration ELECTION_TIMEOUT_MIN = Duration.ofMillis(700);
  /** The longest such wait: each member draws its own between the two. */
  public static final Duration ELECTION_TIMEOUT_MAX = Duration.ofMillis(1400);

  /** The longest warm-up window: clients hold back removals for this long at most. */
  public static final Duration MAX_WARM_UP = Duration.ofMinutes(1);

  /** A builder holding the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The defaults, as a builder would build them. */
  public static ServerConfig defaults() {
    return builder().build();
  }

  /**
   * Parses {@code --name value} / {@code --name=value} flags over {@code ROSTER_NAME}
   * environment variables over the defaults. Unknown flags and bad values are errors naming
   * the setting, the value and what was expected.
   */
  public static ServerConfig parse(String[] args, Map<String, String> env) {
    Builder b = builder();
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
  public static String usage() {
    StringBuilder sb = new StringBuilder("Usage: java -jar roster-server.jar [--option value]...\n\nOptions (env var, default):\n");
    ServerConfig d = defaults();
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
  public static Duration parseDuration(String text) {
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
  public static long parseSize(String text) {
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
  public static String formatSize(long bytes) {
    if (bytes > 0 && bytes % (1024 * 1024) == 0) {
      return (bytes / (1024 * 1024)) + "m";
    }
    return bytes > 0 && bytes % 1024 == 0 ? (bytes / 1024) + "k" : Long.toString(bytes);
  }

  /** Renders a duration the way {@link #parseDuration} reads it. */
  public static String formatDuration(Duration d) {
    long ms = d.toMillis();
    return ms % 1000 == 0 ? (ms / 1000) + "s" : ms + "ms";
  }

  private static void positive(String name, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(name + ": " + (d == null ? "null" : formatDuration(d)) + " (expected: a positive duration)");
    }
  }

  private static void notNegative(String name, Duration d) {
    if (d == null || d.isNegative()) {
      throw new IllegalArgumentException(name + ": " + (d == null ? "null" : formatDuration(d)) + " (expected: zero or a positive duration)");
    }
  }

  private record Option(String expected, String help, BiConsumer<Builder, String> setter,
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
        (b, v) -> b.keepaliveTime(parseDuration(v)), c -> formatDuration(c.keepaliveTime())));
    OPTIONS.put("keepalive-timeout", new Option("a duration like 5s", "Grace on top of --keepalive-time: a session or Nacos connection silent for both is ended and its instances removed.",
        (b, v) -> b.keepaliveTimeout(parseDuration(v)), c -> formatDuration(c.keepaliveTimeout())));
    OPTIONS.put("push-window", new Option("a duration like 20ms", "Changes within this window after a push are merged into the next push.",
        (b, v) -> b.pushWindow(parseDuration(v)), c -> formatDuration(c.pushWindow())));
    OPTIONS.put("push-ack-timeout", new Option("a duration like 3s", "An unacked push is re-sent (latest state) after this.",
        (b, v) -> b.pushAckTimeout(parseDuration(v)), c -> formatDuration(c.pushAckTimeout())));
    OPTIONS.put("shutdown-grace", new Option("a duration like 10s", "On SIGTERM, how long sessions get to move before the server stops hard.",
        (b, v) -> b.shutdownGrace(parseDuration(v)), c -> formatDuration(c.shutdownGrace())));
    OPTIONS.put("max-instances-per-connection", new Option("a positive integer",
        "Ephemeral instances the sessions of one client connection (HTTP/2 connection) may own together.",
        (b, v) -> b.maxInstancesPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.maxInstancesPerConnection())));
    OPTIONS.put("max-subscriptions-per-connection", new Option("a positive integer",
        "Subscriptions the sessions of one client connection may hold together (Watch calls not counted).",
        (b, v) -> b.maxSubscriptionsPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.maxSubscriptionsPerConnection())));
    OPTIONS.put("max-sessions-per-connection", new Option("a positive integer",
        "Session/Connect streams open at once on one client connection.",
        (b, v) -> b.maxSessionsPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.maxSessionsPerConnection())));
    OPTIONS.put("max-watches-per-connection", new Option("a positive integer",
        "Registry/Watch calls open at once on one client connection.",
        (b, v) -> b.maxWatchesPerConnection(Integer.parseInt(v)), c -> String.valueOf(c.maxWatchesPerConnection())));
    OPTIONS.put("max-sessions-per-address", new Option("a positive integer",
        "Session/Connect streams open at once from one remote IP address (all its connections).",
        (b, v) -> b.maxSessionsPerAddress(Integer.parseInt(v)), c -> String.valueOf(c.maxSessionsPerAddress())));
    OPTIONS.put("max-instances-per-address", new Option("a positive integer",
        "Ephemeral instances the sessions of one remote IP address may own together (and, counted apart, the Nacos HTTP API's heartbeat instances registered from one address).",
        (b, v) -> b.maxInstancesPerAddress(Integer.parseInt(v)), c -> String.valueOf(c.maxInstancesPerAddress())));
    OPTIONS.put("max-message-size", new Option("a size in bytes, at least 65536 (suffixes k, m: 4m)",
        "Largest gRPC message the server reads; a larger one ends its call with RESOURCE_EXHAUSTED.",
        (b, v) -> b.maxMessageSize(Math.toIntExact(parseSize(v))), c -> formatSize(c.maxMessageSize())));
    OPTIONS.put("max-service-settings-bytes", new Option("a size in bytes (suffixes k, m: 8m)",
        "Memory all services' settings (UpdateService: protect threshold, metadata) may take together.",
        (b, v) -> b.maxServiceSettingsBytes(parseSize(v)), c -> formatSize(c.maxServiceSettingsBytes())));
    OPTIONS.put("warm-up", new Option("a duration like 30s, at most 1m", "After a start, how long at most clients keep instances a state of this server lacks (their owners may still be reconnecting); it ends sooner once they are back (--warm-up-quiet); 0s turns it off.",
        (b, v) -> b.warmUp(parseDuration(v)), c -> formatDuration(c.warmUp())));
    OPTIONS.put("warm-up-quiet", new Option("a duration like 5s, at most 1m", "The warm-up ends once no session has opened and nothing has been registered for this long since the last (the reconnect storm is over), within --warm-up; 0s: it lasts the whole --warm-up.",
        (b, v) -> b.warmUpQuiet(parseDuration(v)), c -> formatDuration(c.warmUpQuiet())));
    OPTIONS.put("max-instances-per-service", new Option("a positive integer",
        "Instances one service may have, whoever registered them.",
        (b, v) -> b.maxInstancesPerService(Integer.parseInt(v)), c -> String.valueOf(c.maxInstancesPerService())));
    OPTIONS.put("max-service-bytes", new Option("a size in bytes, 1k..15m (suffixes k, m: 3m)",
        "Wire bytes of one service's instances: bounds every full push and query answer (keep it under clients' 4 MiB message limit).",
        (b, v) -> b.maxServiceBytes(parseSize(v)), c -> formatSize(c.maxServiceBytes())));
    OPTIONS.put("members", new Option("host:peerPort,host:peerPort,... (this node may be listed too)",
        "The cluster's members by their peer (Raft) addresses, each optionally as id=host:peerPort (the id defaults to host:peerPort and must be the same on every member); empty: a standalone server. See docs/cluster.md.",
        (b, v) -> b.members(v.isEmpty() ? List.of() : List.of(v.split("\\s*,\\s*"))),
        c -> c.members().isEmpty() ? "(standalone)" : String.join(",", c.members())));
    OPTIONS.put("node-id", new Option("a name without '@' or ','",
        "Picks this node's entry of --members (by its id, host or host:port); without it, the entry whose port is --peer-port on an address of this machine.",
        (b, v) -> b.nodeId(v), c -> c.nodeId().isEmpty() ? "(its --members entry)" : c.nodeId()));
    OPTIONS.put("peer-host", new Option("an address to bind, or 0.0.0.0 for every interface",
        "Address the peer port listens on; default: --host, or, when --host is every interface, the host of this member's own --members entry (where the others reach it). Never every interface unless said.",
        (b, v) -> b.peerHost(v), c -> c.peerHost().isEmpty() ? "(--host, else its --members host)" : c.peerHost()));
    OPTIONS.put("peer-port", new Option("0..65535", "Port of the cluster's own traffic (the Raft log); never for clients.",
        (b, v) -> b.peerPort(Integer.parseInt(v)), c -> String.valueOf(c.peerPort())));
    OPTIONS.put("advertise", new Option("host:port", "Where clients reach this node, as other members suggest it to clients they move; default: its --members host and --port.",
        (b, v) -> b.advertise(v), c -> c.advertise().isEmpty() ? "(member host:port)" : c.advertise()));
    OPTIONS.put("group-commit-window", new Option("a duration like 1ms, up to 100ms",
        "Changes from all sessions of a member within this window go to the log as one entry.",
        (b, v) -> b.groupCommitWindow(parseDuration(v)), c -> formatDuration(c.groupCommitWindow())));
    OPTIONS.put("member-down-after", new Option("a duration like 3s",
        "The leader records a member as down after hearing nothing from it for this long; more than the longest election timeout (1400ms).",
        (b, v) -> b.memberDownAfter(parseDuration(v)), c -> formatDuration(c.memberDownAfter())));
    OPTIONS.put("member-grace", new Option("a duration like 10s",
        "After a member is down (or restarted), its clients have this long to move before what they registered through it is removed.",
        (b, v) -> b.memberGrace(parseDuration(v)), c -> formatDuration(c.memberGrace())));
    OPTIONS.put("balance-settle", new Option("a duration like 10s, at least 1s",
        "How long a session must have been on a member before balance may ask it to move to a less loaded one.",
        (b, v) -> b.balanceSettle(parseDuration(v)), c -> formatDuration(c.balanceSettle())));
    OPTIONS.put("snapshot-every", new Option("a number of log entries, at least 10",
        "A member writes a snapshot of its state every this many log entries and drops the log before it.",
        (b, v) -> b.snapshotEvery(Long.parseLong(v)), c -> String.valueOf(c.snapshotEvery())));
    OPTIONS.put("http-port", new Option("auto, off or 0..65535",
        "Port of the Nacos v1 HTTP open API (naming half) on --host; auto = --port - 1000 (8848), off = none, 0 = any free port. See docs/nacos-compat.md.",
        (b, v) -> b.httpPort(parseHttpPort(v)), c -> formatHttpPort(c.httpPort())));
    OPTIONS.put("http-request-timeout", new Option("a duration like 10s",
        "How long an HTTP request may take to arrive, headers and body, from its first byte; a slower client's connection is closed (a client that sends nothing is closed after 30 s).",
        (b, v) -> b.httpRequestTimeout(parseDuration(v)), c -> formatDuration(c.httpRequestTimeout())));
    OPTIONS.put("dns-port", new Option("off or 0..65535",
        "Port of the DNS server (UDP and TCP) on --host answering A, AAAA and SRV for <service>.<group>.<namespace>.roster.; off = none, 0 = any free port. See docs/dns.md.",
        (b, v) -> b.dnsPort(v.equalsIgnoreCase("off") ? DNS_PORT_OFF : parsePort(v)),
        c -> c.dnsPort() == DNS_PORT_OFF ? "off" : Integer.toString(c.dnsPort())));
    OPTIONS.put("dns-ttl", new Option("a whole number of seconds like 5s, 0s..3600s",
        "Time to live of the DNS server's answers (and of its negative answers).",
        (b, v) -> b.dnsTtl(parseDuration(v)), c -> formatDuration(c.dnsTtl())));
    OPTIONS.put("dns-rate-limit", new Option("responses a second, 0 = off",
        "UDP answers of the DNS port a second per source /24 (IPv4) or /56 (IPv6); over it, every second answer is sent truncated so real clients retry over TCP, the others dropped. 0 = no limit. See docs/dns.md.",
        (b, v) -> b.dnsRateLimit(Integer.parseInt(v)), c -> Integer.toString(c.dnsRateLimit())));
    OPTIONS.put("restore", new Option("a backup file (GET /roster/v1/admin/backup)",
        "Restores the backup's service settings, persistent instances and holds at start, into a server (or cluster) that holds no durable state yet; otherwise it is not applied, with a WARN. Read and checked before the server listens.",
        (b, v) -> b.restore(v.isEmpty() ? null : Path.of(v)), c -> c.restore() == null ? "(none)" : c.restore().toString()));
    OPTIONS.put("probe-interval", new Option("a duration like 3s, 1s..1m",
        "How often the server probes each persistent instance (TCP or HTTP, as its cluster's health check says).",
        (b, v) -> b.probeInterval(parseDuration(v)), c -> formatDuration(c.probeInterval())));
    OPTIONS.put("probe-timeout", new Option("a duration like 500ms, 50ms up to --probe-interval",
        "A probe that has not connected (TCP) or answered its status line (HTTP) within this fails.",
        (b, v) -> b.probeTimeout(parseDuration(v)), c -> formatDuration(c.probeTimeout())));
    OPTIONS.put("probe-threshold", new Option("1..10",
        "Probes in a row that disagree with a persistent instance's health before it is flipped (and pushed).",
        (b, v) -> b.probeThreshold(Integer.parseInt(v)), c -> String.valueOf(c.probeThreshold())));
    OPTIONS.put("probe-allow", new Option("comma-separated CIDR[:PORT[-PORT]], e.g. 10.0.0.0/8,fd00::/8:8000-8999",
        "Where the server may probe: a persistent instance (or a cluster's check port) outside these networks and ports is refused at registration (INVALID_ARGUMENT / 400), and never probed. Default: everywhere but link-local (169.254.0.0/16, fe80::/10) and cloud metadata addresses; unspecified, multicast and broadcast addresses never. See docs/persistence.md.",
        (b, v) -> b.probeAllow(ProbePolicy.parse(v)), c -> c.probeAllow().listed() ? c.probeAllow().describe() : "(default)"));
    OPTIONS.put("tls-cert", new Option("a PEM file of certificates, the server's own first",
        "Turns TLS on for the client port (Roster and Nacos gRPC) and the HTTP port, with this certificate chain; needs --tls-key. Re-read when it changes: new connections get the new one, open ones stay.",
        (b, v) -> b.tlsCert(v.isEmpty() ? null : Path.of(v)), c -> c.tlsCert() == null ? "(off: plaintext)" : String.valueOf(c.tlsCert())));
    OPTIONS.put("tls-key", new Option("a PEM file with an unencrypted PKCS#8 private key",
        "The private key of --tls-cert's first certificate (-----BEGIN PRIVATE KEY-----). Re-read with it.",
        (b, v) -> b.tlsKey(v.isEmpty() ? null : Path.of(v)), c -> c.tlsKey() == null ? "(off)" : String.valueOf(c.tlsKey())));
    OPTIONS.put("tls-client-ca", new Option("a PEM file of CA certificates",
        "Mutual TLS: clients on both ports must present a certificate signed by one of these CAs. Needs --tls-cert. Re-read when it changes. With --auth-file, a certificate whose SPIFFE ID or DNS name the auth file lists is that identity.",
        (b, v) -> b.tlsClientCa(v.isEmpty() ? null : Path.of(v)), c -> c.tlsClientCa() == null ? "(off: no client certificate asked)" : String.valueOf(c.tlsClientCa())));
    OPTIONS.put("auth-file", new Option("a file written by `java -jar roster-server.jar auth`",
        "Turns auth on: every port asks who the caller is and what it may do, from this file of users, tokens, client certificates and grants (re-read when it changes). See docs/security.md.",
        (b, v) -> b.authFile(v.isEmpty() ? null : Path.of(v)), c -> c.authFile() == null ? "(auth off)" : c.authFile().toString()));
    OPTIONS.put("token-ttl", new Option("a duration like 5h, 1m..168h",
        "How long the access token of a login (Nacos clients, the console) is valid.",
        (b, v) -> b.tokenTtl(parseDuration(v)), c -> formatDuration(c.tokenTtl())));
    OPTIONS.put("peer-tls", new Option("on or off",
        "on: the peer port speaks mutual TLS and takes only peers whose certificate the --peer-tls-ca signed; a member needs the three files below. off: plaintext, and any process that reaches the peer port can act as a member (a WARN says so at start). See docs/cluster.md.",
        (b, v) -> b.peerTls(parseOnOff(v)), c -> c.peerTls() ? "on" : "off"));
    OPTIONS.put("peer-tls-cert", new Option("a PEM file",
        "This member's certificate (PEM; its issuer chain may follow), presented on both ends of a peer connection: it must name the host the other members reach it at (--members) and serve as TLS server and client.",
        (b, v) -> b.peerTlsCert(v.isEmpty() ? null : Path.of(v)), c -> c.peerTlsCert() == null ? "(none)" : c.peerTlsCert().toString()));
    OPTIONS.put("peer-tls-key", new Option("a PEM file",
        "The private key of --peer-tls-cert (PEM, unencrypted PKCS#8, or EC/RSA PRIVATE KEY).",
        (b, v) -> b.peerTlsKey(v.isEmpty() ? null : Path.of(v)), c -> c.peerTlsKey() == null ? "(none)" : c.peerTlsKey().toString()));
    OPTIONS.put("peer-tls-ca", new Option("a PEM file",
        "The cluster's CA certificate(s) (PEM): a peer's certificate must be signed by one of them, on both ends.",
        (b, v) -> b.peerTlsCa(v.isEmpty() ? null : Path.of(v)), c -> c.peerTlsCa() == null ? "(none)" : c.peerTlsCa().toString()));
  }

  private static boolean parseOnOff(String v) {
    return switch (v.toLowerCase(Locale.ROOT)) {
      case "on", "true" -> true;
      case "off", "false" -> false;
      default -> throw new IllegalArgumentException("not on or off: " + v);
    };
  }

  /** Names of every option, in help order. */
  public static List<String> optionNames() {
    return new ArrayList<>(OPTIONS.keySet());
  }

  /** Builds a {@link ServerConfig}; starts from the defaults. Not thread-safe. */
  public static final class Builder {
    private String host = "0.0.0.0";
    private int port = 9848;
    private @Nullable Path dataDir = Path.of("data");
    private @Nullable Path logDir;
    private @Nullable Path auditLog;
    private Duration keepaliveTime = Duration.ofSeconds(4);
    private Duration keepaliveTimeout = Duration.ofSeconds(5);
    private Duration pushWindow = Duration.ofMillis(20);
    private Duration pushAckTimeout = Duration.ofSeconds(3);
    private Duration shutdownGrace = Duration.ofSeconds(10);
    private int maxInstancesPerConnection = 5000;
    private int maxSubscriptionsPerConnection = 5000;
    private int maxSessionsPerConnection = 8;
    private int maxWatchesPerConnection = 100;
    private int maxSessionsPerAddress = 1000;
    private int maxInstancesPerAddress = 20_000;
    private int maxMessageSize = 4 * 1024 * 1024;
    private long maxServiceSettingsBytes = 8L * 1024 * 1024;
    private Duration warmUp = Duration.ofSeconds(30);
    private Duration warmUpQuiet = Duration.ofSeconds(5);
    private int maxInstancesPerService = 20_000;
    private long maxServiceBytes = 3L * 1024 * 1024;
    private String nodeId = "";
    private String peerHost = "";
    private int peerPort = 9849;
    private List<String> members = List.of();
    private String advertise = "";
    private Duration groupCommitWindow = Duration.ofMillis(1);
    private Duration memberDownAfter = Duration.ofSeconds(3);
    private Duration memberGrace = Duration.ofSeconds(10);
    private Duration balanceSettle = Duration.ofSeconds(10);
    private long snapshotEvery = 20_000;
    private int httpPort = HTTP_PORT_AUTO;
    private Duration httpRequestTimeout = Duration.ofSeconds(10);
    private int dnsPort = DNS_PORT_OFF;
    private Duration dnsTtl = Duration.ofSeconds(5);
    private int dnsRateLimit;
    private Duration probeInterval = Duration.ofSeconds(3);
    private Duration probeTimeout = Duration.ofMillis(500);
    private int probeThreshold = 3;
    private ProbePolicy probeAllow = ProbePolicy.DEFAULT;
    private @Nullable Path restore;
    private @Nullable Path tlsCert;
    private @Nullable Path tlsKey;
    private @Nullable Path tlsClientCa;
    private @Nullable Path authFile;
    private Duration tokenTtl = Duration.ofHours(5);
    private boolean peerTls = true;
    private @Nullable Path peerTlsCert;
    private @Nullable Path peerTlsKey;
    private @Nullable Path peerTlsCa;

    private Builder() {}

    public Builder host(String v) { host = v; return this; }
    public Builder port(int v) { port = v; return this; }
    /** Null: a standalone server keeps nothing on disk. */
    public Builder dataDir(@Nullable Path v) { dataDir = v; return this; }
    public Builder logDir(@Nullable Path v) { logDir = v; return this; }
    /** Null: {@code audit.log} in the log directory, if there is one. */
    public Builder auditLog(@Nullable Path v) { auditLog = v; return this; }
    public Builder keepaliveTime(Duration v) { keepaliveTime = v; return this; }
    public Builder keepaliveTimeout(Duration v) { keepaliveTimeout = v; return this; }
    public Builder pushWindow(Duration v) { pushWindow = v; return this; }
    public Builder pushAckTimeout(Duration v) { pushAckTimeout = v; return this; }
    public Builder shutdownGrace(Duration v) { shutdownGrace = v; return this; }
    public Builder maxInstancesPerConnection(int v) { maxInstancesPerConnection = v; return this; }
    public Builder maxSubscriptionsPerConnection(int v) { maxSubscriptionsPerConnection = v; return this; }
    public Builder maxSessionsPerConnection(int v) { maxSessionsPerConnection = v; return this; }
    public Builder maxWatchesPerConnection(int v) { maxWatchesPerConnection = v; return this; }
    public Builder maxSessionsPerAddress(int v) { maxSessionsPerAddress = v; return this; }
    public Builder maxInstancesPerAddress(int v) { maxInstancesPerAddress = v; return this; }
    public Builder maxMessageSize(int v) { maxMessageSize = v; return this; }
    public Builder maxServiceSettingsBytes(long v) { maxServiceSettingsBytes = v; return this; }
    public Builder warmUp(Duration v) { warmUp = v; return this; }
    public Builder warmUpQuiet(Duration v) { warmUpQuiet = v; return this; }
    public Builder maxInstancesPerService(int v) { maxInstancesPerService = v; return this; }
    public Builder maxServiceBytes(long v) { maxServiceBytes = v; return this; }
    public Builder nodeId(String v) { nodeId = v; return this; }
    /** Empty: {@code --host}, or this member's {@code --members} host when {@code --host} is every interface. */
    public Builder peerHost(String v) { peerHost = v; return this; }
    public Builder peerPort(int v) { peerPort = v; return this; }
    public Builder members(List<String> v) { members = v; return this; }
    public Builder advertise(String v) { advertise = v; return this; }
    public Builder groupCommitWindow(Duration v) { groupCommitWindow = v; return this; }
    public Builder memberDownAfter(Duration v) { memberDownAfter = v; return this; }
    public Builder memberGrace(Duration v) { memberGrace = v; return this; }
    public Builder balanceSettle(Duration v) { balanceSettle = v; return this; }
    public Builder snapshotEvery(long v) { snapshotEvery = v; return this; }
    /** {@link #HTTP_PORT_AUTO}, {@link #HTTP_PORT_OFF} or a port (0 = any free port). */
    public Builder httpPort(int v) { httpPort = v; return this; }
    public Builder httpRequestTimeout(Duration v) { httpRequestTimeout = v; return this; }
    /** The server's certificate chain (PEM); with {@link #tlsKey}, turns TLS on. */
    public Builder tlsCert(@Nullable Path v) { tlsCert = v; return this; }
    /** The private key of {@link #tlsCert}'s first certificate (PEM, PKCS#8). */
    public Builder tlsKey(@Nullable Path v) { tlsKey = v; return this; }
    /** CA certificates (PEM) a client's certificate must chain to; null: none asked for. */
    public Builder tlsClientCa(@Nullable Path v) { tlsClientCa = v; return this; }
    /** The auth file; null: auth off. */
    public Builder authFile(@Nullable Path v) { authFile = v; return this; }
    public Builder tokenTtl(Duration v) { tokenTtl = v; return this; }
    /** The three TLS files at once (null: plaintext). */
    public Builder tls(@Nullable TlsFiles v) {
      tlsCert = v == null ? null : v.cert();
      tlsKey = v == null ? null : v.key();
      tlsClientCa = v == null ? null : v.clientCa();
      return this;
    }
    /** On by default: a member needs the three peer TLS files; off lets any process on the peer port in. */
    public Builder peerTls(boolean v) { peerTls = v; return this; }
    public Builder peerTlsCert(@Nullable Path v) { peerTlsCert = v; return this; }
    public Builder peerTlsKey(@Nullable Path v) { peerTlsKey = v; return this; }
    public Builder peerTlsCa(@Nullable Path v) { peerTlsCa = v; return this; }
    /** {@link #DNS_PORT_OFF} (the default) or a port (0 = any free port). */
    public Builder dnsPort(int v) { dnsPort = v; return this; }
    public Builder dnsTtl(Duration v) { dnsTtl = v; return this; }
    public Builder dnsRateLimit(int v) { dnsRateLimit = v; return this; }
    public Builder probeInterval(Duration v) { probeInterval = v; return this; }
    public Builder probeTimeout(Duration v) { probeTimeout = v; return this; }
    public Builder probeThreshold(int v) { probeThreshold = v; return this; }
    /** Where the server may probe ({@code --probe-allow}); {@link ProbePolicy#DEFAULT} by default. */
    public Builder probeAllow(ProbePolicy v) { probeAllow = Objects.requireNonNull(v); return this; }
    public Builder restore(@Nullable Path v) { restore = v; return this; }

    public ServerConfig build() {
      return new ServerConfig(host, port, dataDir, logDir, auditLog, keepaliveTime, keepaliveTimeout, pushWindow,
          pushAckTimeout, shutdownGrace, maxInstancesPerConnection, maxSubscriptionsPerConnection,
          maxSessionsPerConnection, maxWatchesPerConnection, maxSessionsPerAddress, maxInstancesPerAddress,
          maxMessageSize, maxServiceSettingsBytes, warmUp, warmUpQuiet, maxInstancesPerService, maxServiceBytes, nodeId,
          peerHost, peerPort, members, advertise, groupCommitWindow, memberDownAfter, memberGrace, balanceSettle,
          snapshotEvery, httpPort,
          httpRequestTimeout, tlsCert, tlsKey, tlsClientCa, authFile, tokenTtl,
          peerTls, peerTlsCert, peerTlsKey, peerTlsCa, dnsPort, dnsTtl, dnsRateLimit, probeInterval, probeTimeout, probeThreshold,
          probeAllow, restore);
    }
  }
}
