package io.roster.server.rpc;

import io.roster.proto.v1.GetLogLevelsRequest;
import io.roster.proto.v1.GetLogLevelsResponse;
import io.roster.proto.v1.ListMembersRequest;
import io.roster.proto.v1.LoggerLevel;
import io.roster.proto.v1.SetLogLevelRequest;
import io.roster.proto.v1.SetLogLevelResponse;
import io.roster.proto.v1.ListMembersResponse;
import io.roster.proto.v1.MemberInfo;
import io.roster.server.cluster.Members;

import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.AdminGrpc;
import io.roster.proto.v1.ConnectionInfo;
import io.roster.proto.v1.DrainInstanceRequest;
import io.roster.proto.v1.DrainInstanceResponse;
import io.roster.proto.v1.ListConnectionsRequest;
import io.roster.proto.v1.ListConnectionsResponse;
import io.roster.server.auth.Audit;
import io.roster.server.auth.Grant;
import io.roster.server.auth.Permission;
import io.roster.server.auth.Principal;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.naming.ConnectionPages;
import io.roster.server.naming.DrainTimeouts;
import io.roster.server.naming.LogLevels;
import io.roster.server.naming.LogText;
import io.roster.server.push.AckCollector;
import io.roster.server.registry.Readiness;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * {@code roster.v1.Admin}: introspection and runtime control for operators. While the server's
 * registry may not be read (a cluster member that has not joined or is catching up), every call
 * but the log levels is answered UNAVAILABLE naming why.
 */
final class AdminService extends AdminGrpc.AdminImplBase {

  private final SessionManager sessions;
  /** The cluster as this member sees it, or null when standalone. */
  private final @Nullable Members cluster;
  private final Readiness readiness;

  AdminService(SessionManager sessions, @Nullable Members cluster, Readiness readiness) {
    this.sessions = sessions;
    this.cluster = cluster;
    this.readiness = readiness;
  }

  @Override
  public void listMembers(ListMembersRequest req, StreamObserver<ListMembersResponse> out) {
    if (refused(out) || notServing(out)) {
      return;
    }
    ListMembersResponse.Builder b = ListMembersResponse.newBuilder();
    if (cluster == null) {
      b.setWritable(true).addMembers(MemberInfo.newBuilder().setId(sessions.nodeId()).setSelf(true).setRole("leader"));
    } else {
      String why = cluster.unwritable();
      b.setWritable(why == null).setUnwritableReason(why == null ? "" : why);
      for (Members.MemberView m : cluster.members()) {
        b.addMembers(MemberInfo.newBuilder().setId(m.id()).setSelf(m.self()).setRole(m.role())
            .setClientAddress(m.clientAddress()).setIncarnation(m.incarnation()).setDown(m.down())
            .setLastContactMs(m.lastContactMs()).setLag(m.lag()).setSessions(m.sessions()));
      }
    }
    out.onNext(b.build());
    out.onCompleted();
  }

  /** Sessions per page: 100 sessions with the largest labels (16 KiB each) stay far below 4 MiB. */
  static final int MAX_CONNECTIONS_PAGE = 100;

  @Override
  public void listConnections(ListConnectionsRequest req, StreamObserver<ListConnectionsResponse> out) {
    if (refused(out) || notServing(out)) {
      return;
    }
    ConnectionPages.Page page;
    try {
      if (req.getPageNo() < 0) { // a uint32 past what an int holds
        throw RegistryException.invalid("page_no", Integer.toUnsignedLong(req.getPageNo()), "a page number from 1");
      }
      // 0 is proto3's unset: page 1, and the largest page.
      page = ConnectionPages.page(sessions, ConnectionPages.Fields.ROSTER,
          s -> req.getClientId().isEmpty() || req.getClientId().equals(s.info().clientId()),
          req.getPageNo() == 0 ? 1 : Integer.toUnsignedLong(req.getPageNo()),
          req.getPageSize() == 0 ? MAX_CONNECTIONS_PAGE : Integer.toUnsignedLong(req.getPageSize()),
          MAX_CONNECTIONS_PAGE);
    } catch (RegistryException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    ListConnectionsResponse.Builder b = ListConnectionsResponse.newBuilder();
    for (Session s : page.sessions()) {
      SessionInfo i = s.info();
      b.addConnections(ConnectionInfo.newBuilder()
          .setConnectionId(i.connectionId())
          .setClientId(i.clientId())
          .setNamespace(i.namespace())
          .setRemoteAddress(i.remoteAddress())
          .setClientName(i.clientName())
          .setClientVersion(i.clientVersion())
          .setConnectedAtMs(i.connectedAtMillis())
          .setInstanceCount(s.instanceCount())
          .setSubscriptionCount(s.subscriptionCount())
          .setUnackedPushes(s.unackedPushes())
          .putAllLabels(i.labels()));
    }
    out.onNext(b.setTotal(page.total()).build());
    out.onCompleted();
  }

  @Override
  public void drainInstance(DrainInstanceRequest req, StreamObserver<DrainInstanceResponse> out) {
    if (notServing(out)) {
      return;
    }
    CompletableFuture<AckCollector.Counts> done;
    ServiceKey service;
    InstanceKey key;
    Principal who = Callers.caller();
    try {
      service = ProtoMapper.serviceKey(req.getService(), "");
      Callers.check(Permission.ADMIN, service);
      Duration timeout = DrainTimeouts.timeout("timeout_ms", req.getTimeoutMs());
      key = ProtoMapper.instanceKey(req.getIp(), req.getPort(), req.getCluster());
      done = sessions.drainInstance(service, key, timeout);
    } catch (RuntimeException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    done.whenComplete((counts, failed) -> {
      Audit.log(who, "DrainInstance", service + " " + key, "", failed != null
          ? String.valueOf(Errors.cause(failed).getMessage()) : counts == null ? "not registered" : "ok (" + counts + ")");
      if (failed != null) {
        out.onError(Errors.toStatusException(Errors.cause(failed)));
      } else if (counts == null) {
        out.onError(Errors.notRegistered(service, key));
      } else {
        out.onNext(DrainInstanceResponse.newBuilder().setDrain(Drains.toProto(counts)).build());
        out.onCompleted();
      }
    });
  }

  private static final LogLevels.Fields LOG_FIELDS = new LogLevels.Fields("logger", "level");

  @Override
  public void setLogLevel(SetLogLevelRequest req, StreamObserver<SetLogLevelResponse> out) {
    if (refused(out)) {
      return;
    }
    LogLevels.LoggerLevel set;
    try {
      set = LogLevels.set(LOG_FIELDS, req.getLogger(), req.getLevel());
    } catch (RegistryException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    Audit.log(Callers.caller(), "SetLogLevel", LogText.of(set.name()), "level=" + set.level(), "ok");
    out.onNext(SetLogLevelResponse.newBuilder().setLogger(toProto(set)).build());
    out.onCompleted();
  }

  @Override
  public void getLogLevels(GetLogLevelsRequest req, StreamObserver<GetLogLevelsResponse> out) {
    if (refused(out)) {
      return;
    }
    GetLogLevelsResponse.Builder b = GetLogLevelsResponse.newBuilder();
    try {
      LogLevels.list(req.getPrefix()).forEach(l -> b.addLoggers(toProto(l)));
    } catch (RegistryException e) {
      out.onError(Errors.toStatusException(e));
      return;
    }
    out.onNext(b.build());
    out.onCompleted();
  }

  private static LoggerLevel toProto(LogLevels.LoggerLevel l) {
    return LoggerLevel.newBuilder().setName(l.name()).setLevel(l.level()).setEffectiveLevel(l.effectiveLevel()).build();
  }

  /** Refuses with UNAVAILABLE naming why while the server's registry may not be read. */
  private boolean notServing(StreamObserver<?> out) {
    String why = readiness.refusal();
    if (why == null) {
      return false;
    }
    out.onError(Errors.toStatusException(new RegistryException(RegistryException.Kind.UNAVAILABLE, "",
        why + "; ask another server")));
    return true;
  }

  /** Refuses, unless the caller is an admin of every namespace: what the server-wide calls need. */
  private static boolean refused(StreamObserver<?> out) {
    try {
      Callers.caller().checkAll(Permission.ADMIN, Grant.ALL);
      return false;
    } catch (RegistryException e) {
      out.onError(Errors.toStatusException(e));
      return true;
    }
  }
}
