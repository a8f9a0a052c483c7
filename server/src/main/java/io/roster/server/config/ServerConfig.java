package io.roster.server.config;

import io.roster.server.probe.ProbePolicy;
import io.roster.server.tls.TlsFiles;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Every server setting, immutable, grouped by concern: where it listens and keeps its files
 * here, the rest in one record each ({@link #sessions}, {@link #limits}, {@link #cluster},
 * {@link #http}, {@link #tls}, {@link #auth}, {@link #dns}, {@link #probes}). Built from
 * command-line flags, then {@code ROSTER_*} environment variables, then the defaults below (a
 * flag wins over the environment). The table in README.md lists the same settings; {@link
 * #usage()} prints it (the flag table itself is {@code Flags}).
 */
public record ServerConfig(
    String host,
    int port,
    @Nullable Path dataDir,
    @Nullable Path logDir,
    @Nullable Path auditLog,
    Duration shutdownGrace,
    @Nullable Path restore,
    SessionSettings sessions,
    Limits limits,
    ClusterSettings cluster,
    HttpSettings http,
    TlsSettings tls,
    AuthSettings auth,
    DnsSettings dns,
    ProbeSettings probes) {

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
    Checks.check(host, port, dataDir, shutdownGrace, sessions, limits, cluster, http, tls, auth, dns, probes);
  }

  /**
   * The port the Nacos v1 HTTP API listens on: {@code --port - 1000} for {@code auto} (0, any
   * free port, when {@code --port} is 0), or -1 when it is off.
   */
  public int resolvedHttpPort() {
    int httpPort = http.httpPort();
    if (httpPort == HTTP_PORT_AUTO) {
      return port == 0 ? 0 : port - 1000;
    }
    return httpPort;
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
    return cluster.clustered();
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
    return Flags.parse(args, env);
  }

  /** The options table for --help. */
  public static String usage() {
    return Flags.usage();
  }

  /** Names of every option, in help order. */
  public static List<String> optionNames() {
    return Flags.optionNames();
  }

  /** Parses {@code 5s}, {@code 200ms}, {@code 1m}, {@code 1h}, or a plain number of ms. */
  public static Duration parseDuration(String text) {
    return Flags.parseDuration(text);
  }

  /** Parses {@code 4194304}, {@code 512k} or {@code 4m} (binary units) into bytes. */
  public static long parseSize(String text) {
    return Flags.parseSize(text);
  }

  /** Renders a size the way {@link #parseSize} reads it. */
  public static String formatSize(long bytes) {
    return Flags.formatSize(bytes);
  }

  /** Renders a duration the way {@link #parseDuration} reads it. */
  public static String formatDuration(Duration d) {
    return Flags.formatDuration(d);
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
      return new ServerConfig(host, port, dataDir, logDir, auditLog, shutdownGrace, restore,
          new SessionSettings(keepaliveTime, keepaliveTimeout, pushWindow, pushAckTimeout, warmUp, warmUpQuiet),
          new Limits(maxInstancesPerConnection, maxSubscriptionsPerConnection, maxSessionsPerConnection,
              maxWatchesPerConnection, maxSessionsPerAddress, maxInstancesPerAddress, maxMessageSize,
              maxServiceSettingsBytes, maxInstancesPerService, maxServiceBytes),
          new ClusterSettings(nodeId, peerHost, peerPort, members, advertise, groupCommitWindow, memberDownAfter,
              memberGrace, balanceSettle, snapshotEvery, peerTls, peerTlsCert, peerTlsKey, peerTlsCa),
          new HttpSettings(httpPort, httpRequestTimeout),
          new TlsSettings(tlsCert, tlsKey, tlsClientCa),
          new AuthSettings(authFile, tokenTtl),
          new DnsSettings(dnsPort, dnsTtl, dnsRateLimit),
          new ProbeSettings(probeInterval, probeTimeout, probeThreshold, probeAllow));
    }
  }
}
