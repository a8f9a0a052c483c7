package io.roster.server.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The checks a {@link ServerConfig} passes when it is built: each setting within its bounds, and
 * the settings that depend on one another (a member's data directory and peer TLS files, the
 * HTTP port beside the client port, the TLS files in pairs). They run in one fixed order, so
 * that of several bad values the same one is named first. Stateless.
 */
final class Checks {

  private Checks() {}

  /** Throws {@link IllegalArgumentException} naming the first setting out of its bounds. */
  static void check(String host, int port, @Nullable Path dataDir, Duration shutdownGrace, SessionSettings sessions,
      Limits limits, ClusterSettings cluster, HttpSettings http, TlsSettings tls, AuthSettings auth, DnsSettings dns,
      ProbeSettings probes) {
    Duration keepaliveTime = sessions.keepaliveTime();
    Duration keepaliveTimeout = sessions.keepaliveTimeout();
    Duration pushWindow = sessions.pushWindow();
    Duration pushAckTimeout = sessions.pushAckTimeout();
    Duration warmUp = sessions.warmUp();
    Duration warmUpQuiet = sessions.warmUpQuiet();
    int maxInstancesPerConnection = limits.maxInstancesPerConnection();
    int maxSubscriptionsPerConnection = limits.maxSubscriptionsPerConnection();
    int maxSessionsPerConnection = limits.maxSessionsPerConnection();
    int maxWatchesPerConnection = limits.maxWatchesPerConnection();
    int maxSessionsPerAddress = limits.maxSessionsPerAddress();
    int maxInstancesPerAddress = limits.maxInstancesPerAddress();
    int maxMessageSize = limits.maxMessageSize();
    long maxServiceSettingsBytes = limits.maxServiceSettingsBytes();
    int maxInstancesPerService = limits.maxInstancesPerService();
    long maxServiceBytes = limits.maxServiceBytes();
    String nodeId = cluster.nodeId();
    String peerHost = cluster.peerHost();
    int peerPort = cluster.peerPort();
    List<String> members = cluster.members();
    String advertise = cluster.advertise();
    Duration groupCommitWindow = cluster.groupCommitWindow();
    Duration memberDownAfter = cluster.memberDownAfter();
    Duration memberGrace = cluster.memberGrace();
    Duration balanceSettle = cluster.balanceSettle();
    long snapshotEvery = cluster.snapshotEvery();
    int httpPort = http.httpPort();
    Duration httpRequestTimeout = http.httpRequestTimeout();
    @Nullable Path tlsCert = tls.tlsCert();
    @Nullable Path tlsKey = tls.tlsKey();
    @Nullable Path tlsClientCa = tls.tlsClientCa();
    Duration tokenTtl = auth.tokenTtl();
    int dnsPort = dns.dnsPort();
    Duration dnsTtl = dns.dnsTtl();
    Duration probeInterval = probes.probeInterval();
    Duration probeTimeout = probes.probeTimeout();
    int probeThreshold = probes.probeThreshold();
    boolean peerTls = cluster.peerTls();
    @Nullable Path peerTlsCert = cluster.peerTlsCert();
    @Nullable Path peerTlsKey = cluster.peerTlsKey();
    @Nullable Path peerTlsCa = cluster.peerTlsCa();
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(peerHost, "peerHost");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port: " + port + " (expected: 0..65535, 0 = any free port)");
    }
    positive("keepalive-time", keepaliveTime);
    positive("keepalive-timeout", keepaliveTimeout);
    positive("http-request-timeout", httpRequestTimeout);
    if (dns.dnsRateLimit() < 0) {
      throw new IllegalArgumentException("dns-rate-limit: " + dns.dnsRateLimit() + " (expected: >= 0, 0 = off)");
    }
    if (dnsPort < ServerConfig.DNS_PORT_OFF || dnsPort > 65535) {
      throw new IllegalArgumentException("dns-port: " + dnsPort + " (expected: off or 0..65535)");
    }
    if (dnsTtl.isNegative() || dnsTtl.toSeconds() > 3600 || dnsTtl.toNanosPart() != 0) {
      throw new IllegalArgumentException("dns-ttl: " + Flags.formatDuration(dnsTtl)
          + " (expected: whole seconds, 0s..3600s)");
    }
    if (probeInterval.compareTo(Duration.ofSeconds(1)) < 0 || probeInterval.compareTo(Duration.ofMinutes(1)) > 0) {
      throw new IllegalArgumentException("probe-interval: " + Flags.formatDuration(probeInterval) + " (expected: 1s..1m)");
    }
    if (probeTimeout.compareTo(Duration.ofMillis(50)) < 0 || probeTimeout.compareTo(probeInterval) > 0) {
      throw new IllegalArgumentException("probe-timeout: " + Flags.formatDuration(probeTimeout)
          + " (expected: 50ms up to --probe-interval, " + Flags.formatDuration(probeInterval) + ")");
    }
    if (probeThreshold < 1 || probeThreshold > 10) {
      throw new IllegalArgumentException("probe-threshold: " + probeThreshold + " (expected: 1..10)");
    }
    notNegative("push-window", pushWindow);
    positive("push-ack-timeout", pushAckTimeout);
    notNegative("shutdown-grace", shutdownGrace);
    notNegative("warm-up", warmUp);
    if (warmUp.compareTo(ServerConfig.MAX_WARM_UP) > 0) {
      throw new IllegalArgumentException("warm-up: " + Flags.formatDuration(warmUp) + " (expected: 0s.." + Flags.formatDuration(ServerConfig.MAX_WARM_UP) + ")");
    }
    notNegative("warm-up-quiet", warmUpQuiet);
    if (warmUpQuiet.compareTo(ServerConfig.MAX_WARM_UP) > 0) {
      throw new IllegalArgumentException("warm-up-quiet: " + Flags.formatDuration(warmUpQuiet) + " (expected: 0s.."
          + Flags.formatDuration(ServerConfig.MAX_WARM_UP) + ")");
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
    if (maxServiceBytes < 1024 || maxServiceBytes > ServerConfig.MAX_SERVICE_BYTES_CEILING) {
      throw new IllegalArgumentException("max-service-bytes: " + maxServiceBytes + " (expected: 1024.."
          + ServerConfig.MAX_SERVICE_BYTES_CEILING + ", i.e. 1k..15m)");
    }
    Objects.requireNonNull(nodeId, "nodeId");
    if (nodeId.contains("@") || nodeId.contains(",") || nodeId.length() > 128) {
      throw new IllegalArgumentException("node-id: \"" + nodeId + "\" (expected: at most 128 characters, no '@' or ',')");
    }
    if (peerPort < 0 || peerPort > 65535) {
      throw new IllegalArgumentException("peer-port: " + peerPort + " (expected: 0..65535)");
    }
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
      throw new IllegalArgumentException("token-ttl: " + Flags.formatDuration(tokenTtl) + " (expected: 1m..168h)");
    }
    if (groupCommitWindow.compareTo(Duration.ofMillis(100)) > 0) {
      throw new IllegalArgumentException("group-commit-window: " + Flags.formatDuration(groupCommitWindow)
          + " (expected: up to 100ms)");
    }
    positive("member-down-after", memberDownAfter);
    if (memberDownAfter.compareTo(ServerConfig.ELECTION_TIMEOUT_MAX) <= 0) {
      throw new IllegalArgumentException("member-down-after: " + Flags.formatDuration(memberDownAfter) + " (expected: more "
          + "than " + Flags.formatDuration(ServerConfig.ELECTION_TIMEOUT_MAX) + ", the longest election timeout: a member is not recorded "
          + "down, nor cut off, before an election could have replaced its leader)");
    }
    notNegative("member-grace", memberGrace);
    if (balanceSettle.compareTo(ServerConfig.MIN_BALANCE_SETTLE) < 0) {
      throw new IllegalArgumentException("balance-settle: " + Flags.formatDuration(balanceSettle) + " (expected: at least "
          + Flags.formatDuration(ServerConfig.MIN_BALANCE_SETTLE) + ": a session that has just moved here may still be redoing its "
          + "registrations, and must not be moved again meanwhile)");
    }
    if (snapshotEvery < 10) {
      throw new IllegalArgumentException("snapshot-every: " + snapshotEvery + " (expected: >= 10 log entries)");
    }
    if (httpPort < ServerConfig.HTTP_PORT_AUTO || httpPort > 65535) {
      throw new IllegalArgumentException("http-port: " + httpPort
          + " (expected: auto, off or 0..65535, 0 = any free port)");
    }
    if (httpPort == ServerConfig.HTTP_PORT_AUTO && port > 0 && port <= 1000) {
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

  private static void atLeastOne(String name, int value) {
    if (value < 1) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 1)");
    }
  }

  private static void positive(String name, Duration d) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(name + ": " + (d == null ? "null" : Flags.formatDuration(d)) + " (expected: a positive duration)");
    }
  }

  private static void notNegative(String name, Duration d) {
    if (d == null || d.isNegative()) {
      throw new IllegalArgumentException(name + ": " + (d == null ? "null" : Flags.formatDuration(d)) + " (expected: zero or a positive duration)");
    }
  }
}
