package io.roster.server.rpc;

import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.grpc.xds.shaded.io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.Names;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.registry.Change;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.time.Scheduler;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An xDS management server for proxyless gRPC clients (docs/xds.md): the Aggregated Discovery
 * Service, state of the world, on the client port. A client whose target is {@code
 * xds:///orders} asks for listener {@code orders}; it gets a listener whose route sends every call
 * to cluster {@code orders}, a cluster of type EDS over the same stream, and an assignment of the
 * service's healthy, enabled instances, a locality per Roster cluster and instance weight, weighted
 * by that weight times its instances ({@link XdsResources}). A change of the service sends a new
 * assignment at once, versioned by its revision.
 *
 * <p>Names: {@code <service>} (the default group of {@code public}), {@code <group>/<service>} or
 * {@code <namespace>/<group>/<service>}.
 *
 * <p>Per stream, at most one response of each type waits while the stream is not ready (the
 * newest), so a slow client costs a bounded amount. A NACK is logged once per stream and not
 * answered: the same version would be refused again.
 *
 * <p>A stream keeps the identity its call proved ({@link Callers}): each request is checked
 * against that identity's grants as the auth file says them at the last check ({@link
 * #revalidate}), and a stream whose identity the file no longer has ends UNAUTHENTICATED.
 */
final class XdsService extends AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase
    implements Registry.ChangeListener {

  private static final Logger log = LoggerFactory.getLogger(XdsService.class);
  static final String LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
  static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
  static final String ENDPOINTS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
  /** Resource names one stream may subscribe to, per type. */
  static final int MAX_NAMES = 1000;

  private final Registry registry;
  private final Scheduler scheduler;
  /** Whether the server's registry may be read now: a member that has not joined or caught up serves no xDS. */
  private final Readiness readiness;
  /** The streams subscribed to each service's endpoints. */
  private final Map<ServiceKey, Set<Stream>> watching = new ConcurrentHashMap<>();
  /** Every open stream. */
  private final Set<Stream> streams = ConcurrentHashMap.newKeySet();

  XdsService(Registry registry, Scheduler scheduler, Readiness readiness) {
    this.registry = registry;
    this.scheduler = scheduler;
    this.readiness = readiness;
  }

  /**
   * {@inheritDoc}
   *
   * <p>While the server's registry may not be read (a cluster member that has not joined or is
   * catching up), the stream ends at once with UNAVAILABLE naming why, and
   * so does an open stream at its next request: the client's xDS channel tries again, or another
   * server.
   */
  @Override
  public StreamObserver<DiscoveryRequest> streamAggregatedResources(StreamObserver<DiscoveryResponse> responses) {
    String refused = readiness.refusal();
    if (refused != null) {
      responses.onError(notServing(refused).asRuntimeException());
      return new StreamObserver<>() {
        @Override
        public void onNext(DiscoveryRequest request) {}

        @Override
        public void onError(Throwable t) {}

        @Override
        public void onCompleted() {}
      };
    }
    Stream s = new Stream((ServerCallStreamObserver<DiscoveryResponse>) responses, Callers.caller());
    streams.add(s);
    return new StreamObserver<>() {
      @Override
      public void onNext(DiscoveryRequest request) {
        String refused = readiness.refusal();
        if (refused != null) {
          s.end(notServing(refused));
          return;
        }
        try {
          s.onRequest(request);
        } catch (RuntimeException e) {
          s.end(Errors.toStatusException(e).getStatus());
        }
      }

      @Override
      public void onError(Throwable t) {
        s.close();
      }

      @Override
      public void onCompleted() {
        s.complete();
      }
    };
  }

  private static io.grpc.Status notServing(String why) {
    return io.grpc.Status.UNAVAILABLE.withDescription("xDS not served here: " + why + "; ask another server");
  }

  @Override
  public void onChange(Change change) {
    Set<Stream> subscribers = watching.get(change.service());
    if (subscribers != null && !subscribers.isEmpty()) {
      scheduler.execute(() -> subscribers.forEach(s -> s.endpointsChanged()));
    }
  }

  /**
   * Gives every stream its identity's current grants, and ends UNAUTHENTICATED each whose identity
   * the auth file no longer has (or whose credential expired). Run after every check of the file.
   *
   * @return how many streams were ended
   */
  int revalidate(Authenticator authenticator) {
    int ended = 0;
    for (Stream s : streams) {
      Principal p = s.principal;
      if (!p.named()) {
        continue;
      }
      Principal now = authenticator.revalidate(p);
      if (now != null) {
        s.principal = now;
      } else if (s.end(io.grpc.Status.UNAUTHENTICATED.withDescription("the credential of " + authenticator.ended(p)
          + "; connect again with a valid one"))) {
        ended++;
      }
    }
    return ended;
  }

  /** The service a resource name means; INVALID_ARGUMENT naming it when it cannot be one. */
  static ServiceKey service(String name) {
    String[] parts = name.split("/", -1);
    return switch (parts.length) {
      case 1 -> ServiceKey.of(Names.DEFAULT_NAMESPACE, Names.DEFAULT_GROUP, parts[0]);
      case 2 -> ServiceKey.of(Names.DEFAULT_NAMESPACE, parts[0], parts[1]);
      case 3 -> ServiceKey.of(parts[0], parts[1], parts[2]);
      default -> throw io.roster.server.model.RegistryException.invalid("resource_names", name,
          "<service>, <group>/<service> or <namespace>/<group>/<service>");
    };
  }

  /** One ADS stream: what it subscribed to, per type, and what waits for it to become ready. */
  private final class Stream {
    private final ServerCallStreamObserver<DiscoveryResponse> out;
    /** Who the stream is, with the grants of the auth file's last check. */
    volatile Principal principal;
    private final Map<String, Set<String>> subscribed = new HashMap<>();
    /** Per type, a response waiting for the stream to become ready (the newest only). */
    private final Map<String, DiscoveryResponse> waiting = new HashMap<>();
    private long nonce;
    private boolean nacked;
    private boolean closed;

    Stream(ServerCallStreamObserver<DiscoveryResponse> out, Principal principal) {
      this.out = out;
      this.principal = principal;
      out.setOnReadyHandler(this::flush);
      out.setOnCancelHandler(this::close);
    }

    synchronized void onRequest(DiscoveryRequest r) {
      String type = r.getTypeUrl();
      if (!type.equals(LISTENER) && !type.equals(CLUSTER) && !type.equals(ENDPOINTS)) {
        return; // RDS is inline in the listener; other types are not served
      }
      if (r.hasErrorDetail()) {
        if (!nacked) {
          nacked = true;
          log.warn("An xDS client ({}) refused {} version {}: {}", r.getNode().getId(), type, r.getVersionInfo(),
              r.getErrorDetail().getMessage());
        }
        return;
      }
      Set<String> names = new LinkedHashSet<>(r.getResourceNamesList());
      if (names.size() > MAX_NAMES) {
        throw io.roster.server.model.RegistryException.limit("resource_names", "", names.size()
            + " resources of one type on one stream (limit: " + MAX_NAMES + ")");
      }
      Principal who = principal;
      for (String name : names) {
        ServiceKey key = service(name);
        who.check(Permission.READ, key.namespace(), key.group(), key.name());
      }
      Set<String> before = subscribed.getOrDefault(type, Set.of());
      if (names.equals(before) && !r.getResponseNonce().isEmpty()) {
        return; // an ACK of what was sent
      }
      subscribed.put(type, names);
      if (type.equals(ENDPOINTS)) {
        for (String name : before) {
          if (!names.contains(name)) {
            unwatch(service(name));
          }
        }
        for (String name : names) {
          watching.computeIfAbsent(service(name), k -> ConcurrentHashMap.newKeySet()).add(this);
        }
      }
      send(type);
    }

    synchronized void endpointsChanged() {
      if (!closed && subscribed.containsKey(ENDPOINTS)) {
        send(ENDPOINTS);
      }
    }

    /** Every subscribed resource of {@code type}, as the state of the world needs. */
    private void send(String type) {
      DiscoveryResponse.Builder r = DiscoveryResponse.newBuilder().setTypeUrl(type)
          .setNonce(Long.toString(++nonce, 36));
      long version = 1;
      for (String name : subscribed.getOrDefault(type, Set.of())) {
        if (type.equals(ENDPOINTS)) {
          ServiceSnapshot state = registry.snapshot(service(name)); // one read: the assignment and its version
          r.addResources(XdsResources.endpoints(name, state));
          version = Math.max(version, state.revision());
        } else {
          r.addResources(type.equals(LISTENER) ? XdsResources.listener(name) : XdsResources.cluster(name));
        }
      }
      r.setVersionInfo(Long.toString(version, 36));
      waiting.put(type, r.build());
      flush();
    }

    synchronized void flush() {
      while (!closed && out.isReady() && !waiting.isEmpty()) {
        String type = waiting.keySet().iterator().next();
        try {
          out.onNext(waiting.remove(type));
        } catch (RuntimeException e) {
          close(); // cancelled meanwhile
        }
      }
    }

    /** Ends the call with {@code status}; false when it had ended already. */
    synchronized boolean end(io.grpc.Status status) {
      if (closed) {
        return false;
      }
      close();
      try {
        out.onError(status.asRuntimeException());
      } catch (RuntimeException e) {
        // Cancelled meanwhile.
      }
      return true;
    }

    /** The client half-closed: the call ends OK, unless it had ended already. */
    synchronized void complete() {
      if (closed) {
        return;
      }
      close();
      try {
        out.onCompleted();
      } catch (RuntimeException e) {
        // Cancelled meanwhile.
      }
    }

    synchronized void close() {
      streams.remove(this);
      if (closed) {
        return;
      }
      closed = true;
      for (String name : subscribed.getOrDefault(ENDPOINTS, Set.of())) {
        unwatch(service(name));
      }
      waiting.clear();
    }

    private void unwatch(ServiceKey key) {
      watching.computeIfPresent(key, (k, set) -> {
        set.remove(this);
        return set.isEmpty() ? null : set;
      });
    }
  }
}
