package io.roster.client.internal;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.roster.client.Instance;
import io.roster.client.RosterClient;
import io.roster.client.RosterException;
import io.roster.client.RosterException.Code;
import io.roster.client.DrainResult;
import io.roster.proto.v1.BatchRegisterInstances;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Credentials;
import io.roster.proto.v1.DeregisterInstance;
import io.roster.proto.v1.Drain;
import io.roster.proto.v1.DrainSummary;
import io.roster.proto.v1.ErrorCode;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.InstanceIdentity;
import io.roster.proto.v1.Ping;
import io.roster.proto.v1.Push;
import io.roster.proto.v1.PushAck;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.RegisterInstance;
import io.roster.proto.v1.ServiceDelta;
import io.roster.proto.v1.Subscribe;
import io.roster.proto.v1.Unsubscribe;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServiceInfo;
import io.roster.proto.v1.Welcome;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one place where protobuf messages meet the client's Java values: requests
 * ({@link Request}) become frames, and results, welcomes, pushes, deltas, query answers and
 * failover files become {@link Answer}, {@link SessionEvents.Welcomed},
 * {@link SessionEvents.Pushed}, {@link Delta}, {@link QueryAnswer} and {@link ServiceSnapshot}.
 * Only this class and the transport ({@link Connector}, {@link SessionStream},
 * {@link GrpcConnector}, {@link Session}, {@link RegistryCalls}) name wire types. Stateless.
 */
final class ProtoMapper {

  private static final Logger log = LoggerFactory.getLogger(ProtoMapper.class);

  private ProtoMapper() {}

  static io.roster.proto.v1.ServiceKey toProto(ServiceKey key) {
    return io.roster.proto.v1.ServiceKey.newBuilder()
        .setNamespace(key.namespace())
        .setGroup(key.group())
        .setName(key.name())
        .build();
  }

  /** Reads a key, filling the defaults the protocol gives to empty namespace and group. */
  static ServiceKey fromProto(io.roster.proto.v1.ServiceKey key) {
    return new ServiceKey(
        key.getNamespace().isEmpty() ? RosterClient.DEFAULT_NAMESPACE : key.getNamespace(),
        key.getGroup().isEmpty() ? RosterClient.DEFAULT_GROUP : key.getGroup(),
        key.getName());
  }

  /**
   * The wire form of an instance to register. Weight and enabled are always sent explicitly (a
   * weight of 0 stays 0); the instance id is the server's to assign.
   */
  static io.roster.proto.v1.Instance toProto(Instance instance) {
    return io.roster.proto.v1.Instance.newBuilder()
        .setIp(instance.ip())
        .setPort(instance.port())
        .setWeight(instance.weight())
        .setHealthy(instance.healthy())
        .setEnabled(instance.enabled())
        .setEphemeral(instance.ephemeral())
        .setCluster(instance.cluster())
        .putAllMetadata(instance.metadata())
        .build();
  }

  /**
   * Reads an instance the server sent: an empty cluster means the default one, an unset weight
   * 1.0 and an unset enabled flag true.
   */
  static Instance fromProto(io.roster.proto.v1.Instance p) {
    return new Instance(
        p.getIp(),
        p.getPort(),
        p.hasWeight() ? p.getWeight() : 1.0,
        p.getHealthy(),
        !p.hasEnabled() || p.getEnabled(),
        p.getEphemeral(),
        p.getCluster().isEmpty() ? Instance.DEFAULT_CLUSTER : p.getCluster(),
        p.getMetadataMap(),
        p.getInstanceId());
  }

  /** A cached state back in wire form (the failover snapshot's file format). */
  static ServiceInfo toProto(ServiceSnapshot s) {
    ServiceInfo.Builder b = ServiceInfo.newBuilder()
        .setService(toProto(s.key()))
        .setRevision(s.revision())
        .setChecksum(s.checksum())
        .setProtectThresholdReached(s.protectThresholdReached());
    for (Instance i : s.instances()) {
      b.addInstances(toProto(i));
    }
    return b.build();
  }

  /**
   * Reads a service state. An instance the client cannot represent (the server should never
   * send one) is logged and left out rather than failing the whole update.
   */
  static ServiceSnapshot fromProto(ServiceInfo info) {
    List<Instance> instances = new ArrayList<>(info.getInstancesCount());
    for (io.roster.proto.v1.Instance p : info.getInstancesList()) {
      try {
        instances.add(fromProto(p));
      } catch (RosterException e) {
        log.warn("Ignoring an invalid instance of {} from the server: {}",
            info.getService().getName(), e.getMessage());
      }
    }
    return new ServiceSnapshot(fromProto(info.getService()), instances, info.getRevision(),
        info.getChecksum(), info.getProtectThresholdReached(), identities(info.getDepartedList()));
  }

  /** Instance identities as the server sends them (an empty cluster is the default one). */
  static Set<InstancesDiff.Identity> identities(List<InstanceIdentity> list) {
    if (list.isEmpty()) {
      return Set.of();
    }
    Set<InstancesDiff.Identity> ids = new HashSet<>(list.size() * 2);
    for (InstanceIdentity p : list) {
      ids.add(identity(p));
    }
    return ids;
  }

  static InstancesDiff.Identity identity(InstanceIdentity p) {
    return new InstancesDiff.Identity(p.getIp(), p.getPort(),
        p.getCluster().isEmpty() ? Instance.DEFAULT_CLUSTER : p.getCluster());
  }

  /** The client code of a server error code. */
  static Code fromProto(ErrorCode code) {
    return switch (code) {
      case ERROR_CODE_INVALID_ARGUMENT -> Code.INVALID_ARGUMENT;
      case ERROR_CODE_NOT_FOUND -> Code.NOT_FOUND;
      case ERROR_CODE_RESOURCE_EXHAUSTED -> Code.RESOURCE_EXHAUSTED;
      case ERROR_CODE_FAILED_PRECONDITION -> Code.FAILED_PRECONDITION;
      case ERROR_CODE_UNAUTHENTICATED -> Code.UNAUTHENTICATED;
      case ERROR_CODE_PERMISSION_DENIED -> Code.PERMISSION_DENIED;
      case ERROR_CODE_UNAVAILABLE -> Code.UNAVAILABLE;
      case ERROR_CODE_INTERNAL -> Code.INTERNAL;
      case ERROR_CODE_UNIMPLEMENTED -> Code.UNIMPLEMENTED;
      default -> Code.UNKNOWN;
    };
  }

  /** The client code of a gRPC status code. */
  static Code fromStatus(Status.Code code) {
    return switch (code) {
      case INVALID_ARGUMENT, OUT_OF_RANGE -> Code.INVALID_ARGUMENT;
      case NOT_FOUND -> Code.NOT_FOUND;
      case RESOURCE_EXHAUSTED -> Code.RESOURCE_EXHAUSTED;
      case FAILED_PRECONDITION -> Code.FAILED_PRECONDITION;
      case UNAUTHENTICATED -> Code.UNAUTHENTICATED;
      case PERMISSION_DENIED -> Code.PERMISSION_DENIED;
      case UNAVAILABLE -> Code.UNAVAILABLE;
      case DEADLINE_EXCEEDED -> Code.TIMEOUT;
      case UNIMPLEMENTED -> Code.UNIMPLEMENTED;
      case INTERNAL, DATA_LOSS -> Code.INTERNAL;
      default -> Code.UNKNOWN;
    };
  }

  /**
   * Turns any failure of a call into a {@link RosterException}: gRPC statuses by code (the
   * status description becomes the message), time-outs into TIMEOUT.
   */
  static RosterException toException(@Nullable Throwable failure, String what) {
    Throwable t = failure == null ? null : unwrap(failure);
    if (t instanceof RosterException re) {
      return re;
    }
    if (t instanceof StatusRuntimeException sre) {
      Status status = sre.getStatus();
      String description = status.getDescription();
      String message = description == null || description.isEmpty()
          ? what + " failed: " + status.getCode()
          : description;
      return new RosterException(fromStatus(status.getCode()), message, "", sre);
    }
    if (t instanceof TimeoutException) {
      return new RosterException(Code.TIMEOUT, what + ": no answer in time", "", t);
    }
    return new RosterException(Code.INTERNAL, what + " failed: " + t, "", t);
  }

  static Throwable unwrap(Throwable t) {
    Throwable cur = t;
    while ((cur instanceof ExecutionException || cur instanceof CompletionException)
        && cur.getCause() != null) {
      cur = cur.getCause();
    }
    if (cur instanceof CancellationException) {
      return new TimeoutException("cancelled");
    }
    return cur;
  }

  // ---- request frames ({@link #frame}) ----

  private static ClientFrame.Builder registerFrame(ServiceKey key, Instance instance) {
    return ClientFrame.newBuilder().setRegister(RegisterInstance.newBuilder()
        .setService(toProto(key))
        .setInstance(toProto(instance)));
  }

  /** Deregisters by identity (ip, port, cluster): the other fields are not sent. */
  private static ClientFrame.Builder deregisterFrame(ServiceKey key, Instance instance) {
    return ClientFrame.newBuilder().setDeregister(DeregisterInstance.newBuilder()
        .setService(toProto(key))
        .setInstance(io.roster.proto.v1.Instance.newBuilder()
            .setIp(instance.ip())
            .setPort(instance.port())
            .setCluster(instance.cluster())));
  }

  /** The whole desired set of a service: replaces what the session registered there. */
  private static ClientFrame.Builder batchRegisterFrame(ServiceKey key, Collection<Instance> set) {
    BatchRegisterInstances.Builder b = BatchRegisterInstances.newBuilder().setService(toProto(key));
    for (Instance i : set) {
      b.addInstances(toProto(i));
    }
    return ClientFrame.newBuilder().setBatchRegister(b);
  }

  private static ClientFrame.Builder subscribeFrame(ServiceKey key) {
    return ClientFrame.newBuilder().setSubscribe(Subscribe.newBuilder().setService(toProto(key)));
  }

  private static ClientFrame.Builder unsubscribeFrame(ServiceKey key) {
    return ClientFrame.newBuilder().setUnsubscribe(Unsubscribe.newBuilder().setService(toProto(key)));
  }

  // ---- requests in the client's terms ----

  /** The frame of a request, without its request id. */
  static ClientFrame.Builder frame(Request request) {
    if (request instanceof Request.Register r) {
      return registerFrame(r.key(), r.instance());
    }
    if (request instanceof Request.Deregister r) {
      return deregisterFrame(r.key(), r.instance());
    }
    if (request instanceof Request.BatchRegister r) {
      return batchRegisterFrame(r.key(), r.instances());
    }
    if (request instanceof Request.Subscribe r) {
      return subscribeFrame(r.key());
    }
    if (request instanceof Request.Unsubscribe r) {
      return unsubscribeFrame(r.key());
    }
    if (request instanceof Request.Query r) {
      return ClientFrame.newBuilder().setQuery(queryRequest(r.key(), ""));
    }
    if (request instanceof Request.Drain r) {
      return ClientFrame.newBuilder().setDrain(Drain.newBuilder().setTimeoutMs(r.timeoutMs()));
    }
    if (request instanceof Request.Ping) {
      return ClientFrame.newBuilder().setPing(Ping.getDefaultInstance());
    }
    if (request instanceof Request.PushAck r) {
      return ClientFrame.newBuilder().setPushAck(PushAck.newBuilder().setPushId(r.pushId()).setResync(r.resync()));
    }
    if (request instanceof Request.Hello r) {
      return ClientFrame.newBuilder().setHello(Hello.newBuilder()
          .setClientId(r.clientId())
          .setNamespace(r.namespace())
          .setClientName(r.clientName())
          .setClientVersion(r.clientVersion())
          .putAllLabels(r.labels())
          .addAllFeatures(r.features())
          .setSessionSeq(r.sessionSeq())
          .setToken(r.token()));
    }
    if (request instanceof Request.Credentials r) {
      return ClientFrame.newBuilder().setCredentials(Credentials.newBuilder().setToken(r.token()));
    }
    throw new IllegalArgumentException("unknown request " + request);
  }

  /** A result in the client's terms. */
  static Answer answer(Result r) {
    DrainSummary d = r.getDrain();
    return new Answer(r.getOk(), r.getOk() ? null : fromProto(r.getCode()), r.getCode().toString(),
        r.getMessage(), r.getField(), r.hasQuery() ? fromProto(r.getQuery()) : null,
        new DrainResult(d.getNotified(), d.getAcked(), d.getTimedOut(), d.getDisconnected()));
  }

  /** {@code Registry/QueryInstances}'s request: {@code knownChecksum} empty when nothing is cached. */
  static QueryInstancesRequest queryRequest(ServiceKey key, String knownChecksum) {
    return QueryInstancesRequest.newBuilder().setService(toProto(key)).setKnownChecksum(knownChecksum).build();
  }

  /** A query answer in the client's terms. */
  static QueryAnswer fromProto(QueryInstancesResponse r) {
    return new QueryAnswer(fromProto(r.getServiceInfo()), r.getNotModified(), r.getWarmUpRemainingMs());
  }

  /** A welcome in the client's terms. */
  static SessionEvents.Welcomed fromProto(Welcome w) {
    return new SessionEvents.Welcomed(w.getConnectionId(), w.getNodeId(), Set.copyOf(w.getFeaturesList()),
        w.getKeepaliveTimeMs(), w.getWarmUpRemainingMs());
  }

  /** A push in the client's terms: a full state, or a delta. */
  static SessionEvents.Pushed fromProto(Push push) {
    if (push.hasDelta()) {
      Delta delta = fromProto(push.getDelta());
      return new SessionEvents.Pushed(push.getPushId(), delta.key(), null, delta);
    }
    ServiceKey key = fromProto(push.getServiceInfo().getService());
    return new SessionEvents.Pushed(push.getPushId(), key, fromProto(push.getServiceInfo()), null);
  }

  /** A delta in the client's terms; an instance it cannot read makes it {@link Delta#invalid}. */
  static Delta fromProto(ServiceDelta d) {
    List<Instance> upserted = new ArrayList<>(d.getUpsertedCount());
    String invalid = null;
    try {
      for (io.roster.proto.v1.Instance p : d.getUpsertedList()) {
        upserted.add(fromProto(p));
      }
    } catch (RosterException e) {
      invalid = e.getMessage();
      upserted.clear();
    }
    List<InstancesDiff.Identity> removed = new ArrayList<>(d.getRemovedCount());
    for (InstanceIdentity r : d.getRemovedList()) {
      removed.add(identity(r));
    }
    return new Delta(fromProto(d.getService()), d.getBaseRevision(), d.getRevision(), d.getChecksum(),
        d.getProtectThresholdReached(), upserted, removed, identities(d.getDepartedList()), invalid);
  }

  /** How a stream ended, for logs: the gRPC status, or that the server completed it. */
  static String describe(@Nullable Throwable error) {
    if (error == null) {
      return "the server ended the session";
    }
    Status status = Status.fromThrowable(error);
    return status.getDescription() == null
        ? status.getCode().toString()
        : status.getCode() + ": " + status.getDescription();
  }

  // ---- the failover file format ----

  /** Writes a state in the failover file format: a {@code roster.v1.ServiceInfo} in protobuf binary. */
  static void writeSnapshot(ServiceSnapshot s, OutputStream out) throws IOException {
    toProto(s).writeTo(out);
  }

  /** Reads a state written by {@link #writeSnapshot}. */
  static ServiceSnapshot readSnapshot(InputStream in) throws IOException {
    return fromProto(ServiceInfo.parseFrom(in));
  }
}
