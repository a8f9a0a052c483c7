package io.roster.server.metrics;

import io.prometheus.metrics.core.metrics.CounterWithCallback;
import io.prometheus.metrics.core.metrics.GaugeWithCallback;
import io.roster.server.probe.HealthProbes;
import io.prometheus.metrics.core.metrics.Histogram;
import io.prometheus.metrics.core.metrics.Info;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.instrumentation.jvm.JvmMetrics;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.roster.server.auth.Authenticator;
import io.roster.server.cluster.ClusterNode;
import io.roster.server.http.HttpRefusals;
import io.roster.server.model.Names;
import io.roster.server.model.Owner;
import io.roster.server.push.PushCounters;
import io.roster.server.push.PushEngine;
import io.roster.server.registry.NamespaceKinds;
import io.roster.server.registry.Registry;
import io.roster.server.registry.RegistryCounters;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The server's metrics in Prometheus's formats (docs/observability.md lists each one): what the
 * registry, the sessions, the push queues, the ports, the auth file and the cluster have counted,
 * read when Prometheus scrapes, plus the process's JVM metrics.
 *
 * <p>Nothing here is on a request's path: the parts of the server count in {@link
 * java.util.concurrent.atomic.LongAdder}s of their own ({@link PushCounters}, {@link
 * RequestCounters}, {@link RegistryCounters}), and a scrape reads them through callbacks. The
 * histograms (change to ack, commit, request durations) are observed where their events happen.
 *
 * <p>Labels are bounded: protocols, owner kinds, results and limits are fixed sets; members are
 * the cluster's; namespaces are the {@value #MAX_NAMESPACES} largest, the rest summed under
 * {@value #OTHER_NAMESPACES}. No service, instance, client or address is ever a label.
 *
 * <p>Thread-safe; scrapes are serialised.
 */
// Counts become Prometheus's doubles: exact up to 2^53, far beyond any count here. Owner kinds
// index the per-namespace counts built here, never stored or sent.
@SuppressWarnings({"LongDoubleConversion", "EnumOrdinal"})
public final class ServerMetrics {

  /** Namespaces with a label value of their own; the others are summed under {@link #OTHER_NAMESPACES}. */
  public static final int MAX_NAMESPACES = 20;
  /** The namespace label of the namespaces past the {@value #MAX_NAMESPACES} largest. */
  public static final String OTHER_NAMESPACES = "_other";

  /** Upper bounds (seconds) of the latency histograms: 1 ms to a minute. */
  static final double[] LATENCY_BUCKETS = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
      10, 30, 60};

  /**
   * The JVM's and the process's metrics: one set per process, whatever the number of servers in
   * it, made at the first scrape (their MXBeans and GC listeners stay off the start's path).
   */
  private static final class Jvm {
    static final PrometheusRegistry REGISTRY = jvmRegistry();
  }

  /** What the metrics read: the server's parts. */
  public record Sources(String version, Registry registry, SessionManager sessions, PushEngine engine, WarmUp warmUp,
      Authenticator authenticator, IntSupplier rosterConnections, IntSupplier nacosConnections,
      IntSupplier httpConnections, @Nullable ClusterNode cluster, LongSupplier wallClockMicros,
      java.util.function.Supplier<HealthProbes.Counts> probes) {}

  private final PrometheusRegistry prometheus = new PrometheusRegistry();
  private final ExpositionFormats formats = ExpositionFormats.init();
  private final Sources sources;

  public ServerMetrics(Sources sources) {
    this.sources = sources;
    Info.builder().name("roster_build_info").help("The Roster version this server runs (always 1)")
        .labelNames("version").register(prometheus).addLabelValues(sources.version());
    registerSessions();
    registerRegistry();
    registerPushes();
    registerRequests();
    registerWarmUp();
    registerAuth();
    registerProbes();
    ClusterNode cluster = sources.cluster();
    if (cluster != null) {
      ClusterMetrics.register(prometheus, cluster, sources.wallClockMicros());
    }
  }

  /** The metrics in the format {@code accept} asks for (OpenMetrics or Prometheus text), with its content type. */
  public synchronized Exposition scrape(@Nullable String accept) {
    MetricSnapshots.Builder all = MetricSnapshots.builder();
    for (MetricSnapshot s : prometheus.scrape()) {
      all.metricSnapshot(s);
    }
    for (MetricSnapshot s : Jvm.REGISTRY.scrape()) {
      all.metricSnapshot(s);
    }
    ExpositionFormatWriter writer = formats.findWriter(accept);
    if (!writer.isAvailable()) {
      writer = formats.getPrometheusTextFormatWriter(); // protobuf asked for: its library is not shipped
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 * 1024);
    try {
      writer.write(out, all.build());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Exposition(writer.getContentType(), out.toString(java.nio.charset.StandardCharsets.UTF_8));
  }

  /** One scrape's answer. */
  public record Exposition(String contentType, String text) {}

  /** The registry this server's own metrics live in (tests read its snapshots). */
  PrometheusRegistry prometheus() {
    return prometheus;
  }

  private void registerSessions() {
    SessionManager sessions = sources.sessions();
    GaugeWithCallback.builder().name("roster_sessions").help("Live sessions, by protocol")
        .labelNames("protocol").callback(cb -> {
          cb.call(sessions.count(Owner.Kind.SESSION), RequestCounters.Protocol.ROSTER.label());
          cb.call(sessions.count(Owner.Kind.NACOS), RequestCounters.Protocol.NACOS_GRPC.label());
        }).register(prometheus);
    GaugeWithCallback.builder().name("roster_connections")
        .help("Open client connections, by protocol (roster: Session/Connect streams; http: the HTTP port's)")
        .labelNames("protocol").callback(cb -> {
          cb.call(sources.rosterConnections().getAsInt(), RequestCounters.Protocol.ROSTER.label());
          cb.call(sources.nacosConnections().getAsInt(), RequestCounters.Protocol.NACOS_GRPC.label());
          cb.call(sources.httpConnections().getAsInt(), RequestCounters.Protocol.HTTP.label());
        }).register(prometheus);
    GaugeWithCallback.builder().name("roster_subscriptions").help("Subscriptions held by live sessions, by protocol")
        .labelNames("protocol").callback(cb -> {
          long roster = 0;
          long nacos = 0;
          for (Session s : sessions.all()) {
            if (s.owner().kind() == Owner.Kind.NACOS) {
              nacos += s.subscriptionCount();
            } else {
              roster += s.subscriptionCount();
            }
          }
          cb.call(roster, RequestCounters.Protocol.ROSTER.label());
          cb.call(nacos, RequestCounters.Protocol.NACOS_GRPC.label());
        }).register(prometheus);
    GaugeWithCallback.builder().name("roster_pushes_pending")
        .help("States waiting for their session's stream to become writable, all sessions together")
        .callback(cb -> cb.call(sessions.all().stream().mapToLong(Session::pendingPushes).sum())).register(prometheus);
    GaugeWithCallback.builder().name("roster_pushes_unacked")
        .help("Pushes sent and not acknowledged yet, all sessions together")
        .callback(cb -> cb.call(sessions.all().stream().mapToLong(Session::unackedPushes).sum())).register(prometheus);
  }

  private void registerRegistry() {
    // Both from one pass over the registry's services per scrape.
    prometheus.register(new MultiCollector() {
      @Override
      public MetricSnapshots collect() {
        GaugeSnapshot.Builder instances = GaugeSnapshot.builder().name("roster_instances")
            .help("Registered instances, by namespace and by the kind of their owner "
                + "(session: a Roster client; nacos: a Nacos gRPC client; lease: a Nacos HTTP heartbeat)");
        GaugeSnapshot.Builder services = GaugeSnapshot.builder().name("roster_services")
            .help("Services with at least one instance, by namespace");
        for (Grouped g : grouped(sources.registry().namespaceKinds())) {
          for (Owner.Kind kind : Owner.Kind.values()) {
            instances.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(g.instances[kind.ordinal()])
                .labels(Labels.of("namespace", g.namespace, "kind", kindLabel(kind))).build());
          }
          services.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(g.services)
              .labels(Labels.of("namespace", g.namespace)).build());
        }
        return MetricSnapshots.builder().metricSnapshot(instances.build()).metricSnapshot(services.build()).build();
      }
    });
    RegistryCounters counted = sources.registry().counters();
    CounterWithCallback.builder().name("roster_registrations_total")
        .help("Instances registered into this server's registry (on a cluster member: every member's), "
            + "by the kind of their owner")
        .labelNames("kind").callback(cb -> {
          for (Owner.Kind kind : Owner.Kind.values()) {
            cb.call(counted.registered(kind), kindLabel(kind));
          }
        }).register(prometheus);
    CounterWithCallback.builder().name("roster_deregistrations_total")
        .help("Instances removed from this server's registry, by the kind of their owner and why "
            + "(request: deregistered, drained or left out of a batch; owner_end: its connection or lease ended)")
        .labelNames("kind", "reason").callback(cb -> {
          for (Owner.Kind kind : Owner.Kind.values()) {
            cb.call(counted.removed(kind), kindLabel(kind), "request");
            cb.call(counted.ended(kind), kindLabel(kind), "owner_end");
          }
        }).register(prometheus);
  }

  private void registerPushes() {
    PushCounters pushes = sources.engine().counters();
    CounterWithCallback.builder().name("roster_pushes_total")
        .help("Pushes written to subscribers' streams, re-sends included, by encoding (full state or delta)")
        .labelNames("encoding").callback(cb -> {
          cb.call(pushes.full(), "full");
          cb.call(pushes.delta(), "delta");
        }).register(prometheus);
    counter("roster_push_bytes_total", "Bytes of pushes written", pushes::bytes);
    counter("roster_push_acks_total", "Pushes acknowledged by their subscribers", pushes::acks);
    counter("roster_push_resends_total", "Pushes sent again because no ack came within the ack timeout",
        pushes::resends);
    counter("roster_push_resyncs_total", "Delta pushes a client could not apply (it gets the full state)",
        pushes::resyncs);
    CounterWithCallback.builder().name("roster_pushes_dropped_total")
        .help("Unsent states dropped, by reason (superseded: a newer state of the service replaced it; "
            + "closed: its session ended)")
        .labelNames("reason").callback(cb -> {
          cb.call(pushes.superseded(), "superseded");
          cb.call(pushes.closed(), "closed");
        }).register(prometheus);
    Histogram changeToAck = Histogram.builder().name("roster_change_to_ack_seconds")
        .help("From a registry change to a subscriber's ack of the push that carried it")
        .classicOnly().classicUpperBounds(LATENCY_BUCKETS).register(prometheus);
    LongSupplier now = sources.wallClockMicros();
    pushes.onChangeAcked(revision -> changeToAck.observe(Math.max(0, now.getAsLong() - revision) / 1e6));
  }

  private void registerRequests() {
    RequestCounters requests = sources.sessions().requests();
    requests.onDuration(new RequestDurations(prometheus));
    CounterWithCallback.builder().name("roster_requests_total")
        .help("Requests handled, by protocol, type and result (ok, or the error's status in lower case)")
        .labelNames("protocol", "type", "result").callback(cb -> requests.forEachRequest(
            (protocol, type, result, count) -> cb.call(count, protocol.label(), type, result)))
        .register(prometheus);
    CounterWithCallback.builder().name("roster_refusals_total")
        .help("Requests refused by a limit, by the limit's flag (max_instances_per_connection, ...)")
        .labelNames("limit").callback(cb -> requests.forEachRefusal(
            (limit, count) -> cb.call(count, limit.replace('-', '_')))).register(prometheus);
    counter("roster_drains_started_total", "Drains started (a client's graceful drain, an operator's instance drain)",
        requests::drainsStarted);
    CounterWithCallback.builder().name("roster_drains_ended_total")
        .help("Drains ended, by result (confirmed: every subscriber acked; timed_out: some did not in time)")
        .labelNames("result").callback(cb -> {
          cb.call(requests.drainsConfirmed(), "confirmed");
          cb.call(requests.drainsTimedOut(), "timed_out");
        }).register(prometheus);
  }

  private void registerWarmUp() {
    WarmUp warmUp = sources.warmUp();
    GaugeWithCallback.builder().name("roster_warming_up")
        .help("1 while this server is in its warm-up window after a start, else 0")
        .callback(cb -> cb.call(warmUp.isWarm() ? 0 : 1)).register(prometheus);
    GaugeWithCallback.builder().name("roster_warm_up_remaining_seconds")
        .help("Seconds left in the warm-up window (0 once warm)")
        .callback(cb -> cb.call(warmUp.isWarm() ? 0 : warmUp.remaining().toMillis() / 1000.0)).register(prometheus);
  }

  private void registerAuth() {
    Authenticator auth = sources.authenticator();
    counter("roster_auth_failures_total", "Bad credentials (unknown tokens, failed logins), on every port",
        auth::failures);
    counter("roster_auth_logins_throttled_total",
        "Logins refused without their password check (429): too many failures of the user or host, or a full queue",
        auth::loginsThrottled);
    counter("roster_auth_revoked_total",
        "Credentials refused as revoked: static tokens that left the auth file, access tokens of a removed user "
            + "or of an old password", auth::revokedRefused);
    if (!auth.enabled()) {
      return;
    }
    CounterWithCallback.builder().name("roster_auth_reload_total")
        .help("Checks of the auth file that found it changed, by result (ok: taken; error: unreadable or invalid, "
            + "the last good file stays in use, counted at every check while it stays so)")
        .labelNames("result").callback(cb -> {
          cb.call(auth.reloads().ok(), "ok");
          cb.call(auth.reloads().errors(), "error");
        }).register(prometheus);
    GaugeWithCallback.builder().name("roster_auth_reload_last_success_timestamp_seconds")
        .help("When the auth file in use was read (Unix time): at start, or by the last good reload")
        .callback(cb -> cb.call(auth.reloads().loadedMillis() / 1000.0)).register(prometheus);
  }

  private void registerProbes() {
    var probes = sources.probes();
    counter("roster_probes_total", "Probes of persistent instances this member started (TCP or HTTP)",
        () -> probes.get().probes());
    counter("roster_probes_skipped_total", "Probes skipped: too many in flight, or an address that is not an IP",
        () -> probes.get().skipped());
    counter("roster_probe_flips_total", "Health changes of persistent instances this member's probes decided",
        () -> probes.get().flips());
    GaugeWithCallback.builder().name("roster_probe_targets").help("Persistent instances this member probes now")
        .callback(cb -> cb.call(probes.get().targets())).register(prometheus);
  }

  /**
   * What the HTTP port refused before any route saw it ({@code roster_http_refusals_total}, by
   * reason), read at each scrape. Called once by a server that has an HTTP port.
   */
  public void httpRefusals(HttpRefusals refusals) {
    CounterWithCallback.builder().name("roster_http_refusals_total")
        .help("Requests the HTTP port refused before any route saw them, by reason (too_large, uri_too_long, "
            + "headers_too_large, bad_request, slow: cut for arriving too slowly, other)")
        .labelNames("reason").callback(cb -> refusals.forEach((reason, n) -> cb.call(n, reason.label())))
        .register(prometheus);
  }

  /**
   * The data directory's size and its file system's free and total space (docs/observability.md),
   * read at each scrape: a full disk refuses durable changes (docs/persistence.md). Called once by
   * a server that has a data directory.
   */
  public void dataDir(java.nio.file.Path dir) throws IOException {
    DataDirMetrics.register(prometheus, dir);
  }

  /**
   * Seconds until the certificate each TLS port serves stops being valid ({@code
   * roster_tls_certificate_expiry_seconds}, by port), read at each scrape from {@code notAfter}
   * (by port label: client, http, peer). Called once; nothing is registered for no port.
   */
  public void certificateExpiry(Map<String, Supplier<Instant>> notAfter) {
    if (!notAfter.isEmpty()) {
      CertificateMetrics.register(prometheus, Map.copyOf(notAfter), sources.wallClockMicros());
    }
  }

  private void counter(String name, String help, LongSupplier value) {
    CounterWithCallback.builder().name(name).help(help).callback(cb -> cb.call(value.getAsLong())).register(prometheus);
  }

  private static String kindLabel(Owner.Kind kind) {
    return kind.name().toLowerCase(Locale.ROOT);
  }

  /** One namespace label's counts. */
  private static final class Grouped {
    final String namespace;
    int services;
    final int[] instances = new int[Owner.Kind.values().length];

    Grouped(String namespace) {
      this.namespace = namespace;
    }

    void add(NamespaceKinds n) {
      services += n.services();
      for (Owner.Kind kind : Owner.Kind.values()) {
        instances[kind.ordinal()] += n.instances(kind);
      }
    }
  }

  /**
   * The scrape's namespaces as labels: the {@value #MAX_NAMESPACES} with the most instances each
   * on its own, the rest summed under {@value #OTHER_NAMESPACES}; an empty registry as the default
   * namespace with nothing in it, so that its series read 0 rather than nothing.
   */
  private static List<Grouped> grouped(List<NamespaceKinds> namespaces) {
    List<NamespaceKinds> all = new ArrayList<>(namespaces);
    all.sort(Comparator.comparingInt((NamespaceKinds n) -> -n.instances()).thenComparing(
        NamespaceKinds::namespace));
    List<Grouped> out = new ArrayList<>(Math.min(all.size(), MAX_NAMESPACES + 1));
    Grouped other = null;
    for (int i = 0; i < all.size(); i++) {
      NamespaceKinds n = all.get(i);
      if (i < MAX_NAMESPACES) {
        Grouped g = new Grouped(n.namespace());
        g.add(n);
        out.add(g);
      } else {
        if (other == null) {
          other = new Grouped(OTHER_NAMESPACES);
          out.add(other);
        }
        other.add(n);
      }
    }
    if (out.isEmpty()) {
      out.add(new Grouped(Names.DEFAULT_NAMESPACE));
    }
    return out;
  }

  private static PrometheusRegistry jvmRegistry() {
    PrometheusRegistry r = new PrometheusRegistry();
    JvmMetrics.builder().register(r);
    return r;
  }
}
