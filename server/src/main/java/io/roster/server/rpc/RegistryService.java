package io.roster.server.rpc;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.GetServiceRequest;
import io.roster.proto.v1.GetServiceResponse;
import io.roster.proto.v1.ListServicesRequest;
import io.roster.proto.v1.ListServicesResponse;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.RegistryGrpc;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.UpdateInstanceRequest;
import io.roster.proto.v1.UpdateServiceRequest;
import io.roster.proto.v1.RegisterInstanceRequest;
import io.roster.proto.v1.RegisterInstanceResponse;
import io.roster.proto.v1.DeregisterInstanceRequest;
import io.roster.proto.v1.DeregisterInstanceResponse;
import io.roster.server.naming.Persistent;
import io.roster.server.probe.ProbePolicy;
import io.roster.server.registry.Claim;
import io.roster.proto.v1.UpdateInstanceResponse;
import io.roster.proto.v1.WatchRequest;
import io.roster.server.auth.Audit;
import io.roster.server.auth.Authenticator;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.Instance;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.model.ServiceSnapshot;
import io.roster.server.naming.ServiceLists;
import io.roster.server.naming.Updates;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushEngine;
import io.roster.server.push.PushPayload;
import io.roster.server.push.PushQueue;
import io.roster.server.push.PushTarget;
import io.roster.server.registry.Readiness;
import io.roster.server.registry.Registry;
import io.roster.server.registry.ServiceSettings;
import io.roster.server.registry.Writer;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.Scope;
import io.roster.server.session.SessionLimits;
import io.roster.server.stream.StreamWriter;
import io.roster.server.time.Scheduler;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/** {@code roster.v1.Registry}: stateless reads and Watch. */
final class RegistryService extends RegistryGrpc.RegistryImplBase {

  static final int DEFAULT_PAGE_SIZE = 100;
  static final int MAX_PAGE_SIZE = 1000;

  private final Registry registry;
  private final Updates updates;
  private final Persistent persistent;
  private final PushEngine engine;
  private final Scheduler scheduler;
  private final SessionLimits limits;
  private final Set<Watcher> watchers = ConcurrentHashMap.newKeySet();
  private volatile @Nullable String stopping;
  /**
   * Whether the server's registry may be read (not while a cluster member has not joined or is
   * catching up), and whether its answers may be stale (a member cut off from the majority).
   */
  private final Readiness readiness;
  private final WarmUp warmUp;
  private final RequestCounters counters;

  /** A service of a warm registry. */
  RegistryService(Registry registry, PushEngine engine, Scheduler scheduler, SessionLimits limits) {
    this(registry, Writer.direct(registry), engine, scheduler, limits, WarmUp.warm(scheduler), new RequestCounters(),
        () -> ProbePolicy.DEFAULT, Readiness.ready());
  }

  /**
   * @param warmUp told in every query answer while it lasts
   * @param counters where a Watch refused by a limit is counted
   * @param probePolicy where the server may probe ({@code --probe-allow}): persistent registrations and checks follow it
   * @param readiness whether the server's registry may be read now, and why not
   */
  RegistryService(Registry registry, Writer writer, PushEngine engine, Scheduler scheduler, SessionLimits limits,
      WarmUp warmUp, RequestCounters counters, java.util.function.Supplier<ProbePolicy> probePolicy,
      Readiness readiness) {
    this.counters = counters;
    this.readiness = readiness;
    this.registry = registry;
    this.updates = new Updates(writer, registry, probePolicy);
    this.persistent = new Persistent(registry, writer, probePolicy);
    this.engine = engine;
    this.scheduler = scheduler;
    this.limits = limits;
    this.warmUp = warmUp;
  }

  @Override
  public void queryInstances(QueryInstancesRequest req, StreamObserver<QueryInstancesResponse> out) {
    QueryInstancesResponse response; // answer() refuses while stopping
    try {
      Callers.check(Permission.READ, ProtoMapper.serviceKey(req.getService(), ""));
      response = answer(req, "");
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  /**
   * The answer to a query, for this rpc and for a session's {@code query} frame (whose
   * session namespace is the default). Refused with UNAVAILABLE while the server stops.
   */
  QueryInstancesResponse answer(QueryInstancesRequest req, String defaultNamespace) {
    RegistryException refused = refusal();
    if (refused != null) {
      throw refused;
    }
    ServiceKey key = ProtoMapper.serviceKey(req.getService(), defaultNamespace);
    Set<String> clusters = ProtoMapper.clusters(req.getClustersList(), "clusters");
    ServiceSnapshot view = registry.snapshot(key).view(clusters, req.getHealthyOnly());
    long warmingMs = SessionService.warmUpMillis(warmUp);
    if (!req.getKnownChecksum().isEmpty() && req.getKnownChecksum().equals(view.checksum())) {
      return QueryInstancesResponse.newBuilder().setServiceInfo(ProtoMapper.toProtoHeader(view))
          .setNotModified(true).setWarmUpRemainingMs(warmingMs).setPossiblyStale(readiness.unwritable() != null)
          .build();
    }
    return QueryInstancesResponse.newBuilder().setServiceInfo(ProtoMapper.toProto(view))
        .setWarmUpRemainingMs(warmingMs).setPossiblyStale(readiness.unwritable() != null).build();
  }

  @Override
  public void listServices(ListServicesRequest req, StreamObserver<ListServicesResponse> out) {
    if (refuseWhileStopping(out)) {
      return;
    }
    ListServicesResponse.Builder b = ListServicesResponse.newBuilder();
    try {
      String namespace = req.getNamespace().isEmpty() ? Names.DEFAULT_NAMESPACE : req.getNamespace();
      Callers.caller().checkAll(Permission.READ, namespace);
      // uint32 on the wire; 0 is "not set".
      long pageNo = req.getPageNo() == 0 ? 1 : Integer.toUnsignedLong(req.getPageNo());
      long pageSize = req.getPageSize() == 0 ? DEFAULT_PAGE_SIZE : Integer.toUnsignedLong(req.getPageSize());
      Registry.ServicePage page = ServiceLists.page(registry, ServiceLists.Fields.ROSTER, namespace, req.getGroup(),
          pageNo, pageSize, MAX_PAGE_SIZE);
      b.setTotal(page.total());
      page.services().forEach(k -> b.addServices(ProtoMapper.toProto(k)));
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    out.onNext(b.build());
    out.onCompleted();
  }

  @Override
  public void updateInstance(UpdateInstanceRequest req, StreamObserver<UpdateInstanceResponse> out) {
    if (refuseWhileStopping(out)) {
      return;
    }
    CompletableFuture<Instance> updated;
    ServiceKey service;
    InstanceKey key;
    Principal who = Callers.caller();
    Updates.InstanceChange change = new Updates.InstanceChange(
        req.hasEnabled() ? req.getEnabled() : null,
        req.hasWeight() ? req.getWeight() : null,
        req.hasHealthy() ? req.getHealthy() : null,
        req.getReplaceMetadata(), req.getMetadataMap());
    try {
      service = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.ADMIN, service);
      key = ProtoMapper.instanceKey(req.getIp(), req.getPort(), req.getCluster());
      updated = updates.instance(service, key, change);
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    updated.whenComplete((instance, failed) -> {
      Audit.log(who, "UpdateInstance", service + " " + key, change.describe(), failed != null
          ? String.valueOf(Errors.cause(failed).getMessage()) : instance == null ? "not registered" : "ok");
      if (failed != null) {
        out.onError(Errors.toStatusException(Errors.cause(failed)));
      } else if (instance == null) {
        out.onError(Errors.notRegistered(service, key));
      } else {
        out.onNext(UpdateInstanceResponse.newBuilder().setInstance(ProtoMapper.toProto(instance)).build());
        out.onCompleted();
      }
    });
  }

  @Override
  public void registerInstance(RegisterInstanceRequest req, StreamObserver<RegisterInstanceResponse> out) {
    if (refuseWhileStopping(out)) {
      return;
    }
    CompletableFuture<Instance> registered;
    try {
      ServiceKey service = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.WRITE, service);
      Instance instance = ProtoMapper.persistentInstance(req.getInstance());
      registered = persistent.register(service, instance, Callers.caller());
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    registered.whenComplete((instance, failed) -> {
      if (failed != null) {
        out.onError(Errors.toStatusException(Errors.cause(failed)));
      } else {
        out.onNext(RegisterInstanceResponse.newBuilder().setInstance(ProtoMapper.toProto(instance)).build());
        out.onCompleted();
      }
    });
  }

  @Override
  public void deregisterInstance(DeregisterInstanceRequest req, StreamObserver<DeregisterInstanceResponse> out) {
    if (refuseWhileStopping(out)) {
      return;
    }
    CompletableFuture<Boolean> removed;
    try {
      ServiceKey service = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.WRITE, service);
      removed = persistent.deregister(service, ProtoMapper.instanceKey(req.getIp(), req.getPort(), req.getCluster()),
          Callers.caller());
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    removed.whenComplete((done, failed) -> {
      if (failed != null) {
        out.onError(Errors.toStatusException(Errors.cause(failed)));
      } else {
        out.onNext(DeregisterInstanceResponse.newBuilder().setDeregistered(done).build());
        out.onCompleted();
      }
    });
  }


  @Override
  public void updateService(UpdateServiceRequest req, StreamObserver<GetServiceResponse> out) {
    if (refuseWhileStopping(out)) {
      return;
    }
    ServiceKey key;
    CompletableFuture<ServiceSettings> updated;
    Principal who = Callers.caller();
    Updates.ServiceChange change;
    try {
      change = new Updates.ServiceChange(req.hasProtectThreshold() ? req.getProtectThreshold() : null,
          req.getReplaceMetadata(), req.getMetadataMap(), ProtoMapper.healthChecks(req.getHealthChecksList()));
      key = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.ADMIN, key);
      updated = updates.service(key, change);
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    updated.whenComplete((settings, failed) -> {
      Audit.log(who, "UpdateService", key.toString(), change.describe(),
          failed != null ? String.valueOf(Errors.cause(failed).getMessage()) : "ok");
      if (failed != null) {
        out.onError(Errors.toStatusException(Errors.cause(failed)));
      } else {
        getService(GetServiceRequest.newBuilder().setService(ProtoMapper.toProto(key)).build(), out);
      }
    });
  }

  @Override
  public void getService(GetServiceRequest req, StreamObserver<GetServiceResponse> out) {
    if (refuseWhileStopping(out)) {
      return;
    }
    GetServiceResponse response;
    try {
      ServiceKey key = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.READ, key);
      Registry.ServiceStats stats = registry.stats(key);
      int subscribers = engine.subscriberCount(key);
      ServiceSettings settings = registry.settings(key);
      if (stats == null && subscribers == 0 && settings.equals(ServiceSettings.DEFAULT)) {
        throw new RegistryException(RegistryException.Kind.NOT_FOUND, "service",
            "service " + key + " has no instances and no subscribers");
      }
      ServiceSnapshot snapshot = registry.snapshot(key);
      response = GetServiceResponse.newBuilder()
          .setService(ProtoMapper.toProto(key))
          .setInstanceCount(stats == null ? 0 : stats.instanceCount())
          .setHealthyCount(stats == null ? 0 : stats.healthyCount())
          .setSubscriberCount(subscribers)
          .setRevision(snapshot.revision())
          .setChecksum(snapshot.checksum())
          .setProtectThreshold(settings.protectThreshold())
          .putAllMetadata(settings.metadata())
          .addAllHealthChecks(ProtoMapper.toProto(settings.checks()))
          .build();
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    out.onNext(response);
    out.onCompleted();
  }

  @Override
  public void watch(WatchRequest req, StreamObserver<ServiceInfo> responseObserver) {
    if (refuseWhileStopping(responseObserver)) {
      return;
    }
    ServerCallStreamObserver<ServiceInfo> out = (ServerCallStreamObserver<ServiceInfo>) responseObserver;
    ServiceKey key;
    Set<String> clusters;
    Scope scope = Connections.scope();
    try {
      key = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.READ, key);
      clusters = ProtoMapper.clusters(req.getClustersList(), "clusters");
      if (scope != null) {
        scope.acquire(Scope.Counted.WATCHES, limits);
      }
    } catch (RuntimeException e) {
      if (e instanceof RegistryException re && !re.limit().isEmpty()) {
        counters.refused(re.limit()); // the call itself is counted as it ends (CountedCalls)
      }
      out.onError(Errors.toStatusException(e));
      return;
    }
    Watcher w = new Watcher(out, key, clusters, scheduler, scope, engine.counters(), Callers.caller());
    out.setOnReadyHandler(w.queue::onReady);
    out.setOnCancelHandler(() -> forget(w));
    watchers.add(w);
    String reason = stopping;
    if (reason != null) {
      // stop() ran between the check above and the add: end this one as stop() would have.
      forget(w);
      w.end(Status.UNAVAILABLE.withDescription(reason + "; watch again, on another server if there is one"));
      return;
    }
    engine.subscribe(key, w);
    if (!watchers.contains(w)) {
      // Cancelled, or ended by stop(), between the add and the subscribe: forget() found
      // nothing to unsubscribe then, so it is undone here.
      engine.unsubscribe(key, w);
    }
  }

  /**
   * The server is stopping: from now on every call is answered UNAVAILABLE (the state is
   * being torn down as sessions leave, and must not be served as the truth), and every Watch
   * call ends with UNAVAILABLE, so that watchers go elsewhere instead of holding the
   * shutdown grace period.
   */
  void stop(String reason) {
    stopping = reason;
    for (Watcher w : watchers) {
      forget(w);
      w.end(Status.UNAVAILABLE.withDescription(reason + "; watch again, on another server if there is one"));
    }
  }

  /**
   * Ends UNAUTHENTICATED every Watch call whose identity the auth file no longer has (or whose
   * credential expired), as sessions end (decision 65). Run after every check of the file.
   *
   * @return how many calls were ended
   */
  int revalidate(Authenticator authenticator) {
    int ended = 0;
    for (Watcher w : watchers) {
      if (w.principal.named() && authenticator.revalidate(w.principal) == null) {
        forget(w);
        w.end(Status.UNAUTHENTICATED.withDescription("the credential of " + authenticator.ended(w.principal)
            + "; watch again with a valid one"));
        ended++;
      }
    }
    return ended;
  }

  private boolean refuseWhileStopping(StreamObserver<?> out) {
    RegistryException refused = refusal();
    if (refused == null) {
      return false;
    }
    out.onError(Errors.toStatusException(refused));
    return true;
  }

  /**
   * UNAVAILABLE while the server stops (its state is being torn down), or while its registry is
   * not the cluster's (a member that has not joined, or is catching up), else null.
   */
  private @Nullable RegistryException refusal() {
    String reason = stopping != null ? stopping : readiness.refusal();
    return reason == null ? null
        : new RegistryException(RegistryException.Kind.UNAVAILABLE, "", reason + "; ask another server");
  }

  private void forget(Watcher w) {
    if (watchers.remove(w)) {
      engine.unsubscribe(w.key, w);
      w.queue.close();
      if (w.scope != null) {
        w.scope.release(Scope.Counted.WATCHES, 1);
      }
    }
  }

  /** A Watch call as a push target: latest wins, sent when ready, never acked. */
  private static final class Watcher implements PushTarget, Outbound {
    private final StreamWriter<ServiceInfo> out;
    private final ServiceKey key;
    private final Set<String> clusters;
    private final PushQueue queue;
    private final Scope scope;
    /** Who called: the call ends when the auth file no longer has this identity. */
    final Principal principal;

    Watcher(ServerCallStreamObserver<ServiceInfo> out, ServiceKey key, Set<String> clusters, Scheduler scheduler,
        Scope scope, io.roster.server.push.PushCounters counters, Principal principal) {
      this.out = new StreamWriter<>(out);
      this.principal = principal;
      this.scope = scope;
      this.key = key;
      this.clusters = clusters;
      this.queue = new PushQueue(this, scheduler, null, null, counters);
    }

    @Override
    public Set<String> clusters() {
      return clusters;
    }

    @Override
    public void offer(PushPayload payload) {
      queue.offer(key, payload);
    }

    @Override
    public boolean isReady() {
      return out.isReady();
    }

    @Override
    public int send(PushPayload payload) {
      if (out.ended()) {
        return 0;
      }
      var state = ProtoMapper.toProto(payload.snapshot());
      // Not written once ended, or when cancelled meanwhile (the cancel handler cleans up).
      return out.write(state) ? state.getSerializedSize() : 0;
    }

    void end(Status status) {
      out.fail(status);
    }

    @Override
    public String toString() {
      return "Watch(" + key + ")";
    }
  }
}
