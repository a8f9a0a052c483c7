package io.roster.server.rpc;

import static io.roster.server.session.RequestCounters.Protocol.ROSTER;

import io.grpc.Status;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Pong;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.WarmUpDone;
import io.roster.proto.v1.Welcome;
import io.roster.server.auth.Permission;
import io.roster.server.model.Instance;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.naming.DrainTimeouts;
import io.roster.server.naming.Hellos;
import io.roster.server.naming.LogText;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.Admission;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The frame dispatch of {@code roster.v1.Session/Connect}: what each client frame of a {@link
 * SessionCall} means (hello opens the session; the others become its calls) and the frame that
 * answers it. Owns the protocol's per-frame rules: the request id's bounds, the frame a
 * session's first must be, which frames count as requests in the metrics, and what {@code
 * welcome} tells. The stream itself (reads, flow control, liveness, writes) is the call's.
 *
 * <p>Thread-safe: one instance serves every stream; a frame is handled on the thread that
 * delivered it, and an answer that waits for the log is written as {@link
 * SessionCall#whenApplied} says.
 */
final class SessionFrames {

  private static final Logger log = LoggerFactory.getLogger(SessionService.class);
  private static final int MAX_REQUEST_ID = 64;

  /** Each frame's name in the request metrics: the frame case in lower case. */
  private static final Map<ClientFrame.FrameCase, String> FRAME_TYPES = frameTypes();

  private static Map<ClientFrame.FrameCase, String> frameTypes() {
    Map<ClientFrame.FrameCase, String> types = new EnumMap<>(ClientFrame.FrameCase.class);
    for (ClientFrame.FrameCase c : ClientFrame.FrameCase.values()) {
      types.put(c, c.name().toLowerCase(Locale.ROOT));
    }
    return types;
  }

  /** Frames beyond the base protocol that this server answers, told in {@code welcome}. */
  static final List<String> FEATURES = List.of("query", PushEncoder.FEATURE_DELTA, "credentials");

  /** Told once to the sessions whose welcome said the server was warming up, when it is warm. */
  static final ServerFrame WARM_UP_DONE =
      ServerFrame.newBuilder().setWarmUpDone(WarmUpDone.getDefaultInstance()).build();

  private final SessionManager sessions;
  private final Hellos hellos;
  private final BiFunction<QueryInstancesRequest, String, QueryInstancesResponse> queries;
  private volatile String nodeId = "";
  private final Duration keepaliveTime;
  private final Duration keepaliveTimeout;
  private final Duration ackTimeout;
  private final String version;
  /** Whether a hello may open a session now. */
  private final Admission admission;
  private final WarmUp warmUp;

  /**
   * @param queries answers a {@code query} frame given the session's namespace
   * @param warmUp told in {@code welcome}
   */
  SessionFrames(SessionManager sessions, BiFunction<QueryInstancesRequest, String, QueryInstancesResponse> queries,
      Duration keepaliveTime, Duration keepaliveTimeout, Duration ackTimeout, String version, Admission admission,
      WarmUp warmUp) {
    this.sessions = sessions;
    this.hellos = new Hellos(sessions);
    this.queries = queries;
    this.keepaliveTime = keepaliveTime;
    this.keepaliveTimeout = keepaliveTimeout;
    this.ackTimeout = ackTimeout;
    this.version = version;
    this.admission = admission;
    this.warmUp = warmUp;
  }

  /** Sets the node id told in {@code welcome}; known once the port is bound. */
  void nodeId(String id) {
    this.nodeId = id;
  }

  /**
   * Handles one frame of {@code call}'s stream, on the thread that delivered it.
   *
   * @throws ProtocolViolation when the frame breaks the protocol: the stream ends with its status
   */
  void handle(SessionCall call, ClientFrame frame) {
    ClientFrame.FrameCase kind = frame.getFrameCase();
    if (kind == ClientFrame.FrameCase.FRAME_NOT_SET) {
      throw new ProtocolViolation(Status.INVALID_ARGUMENT.withDescription(
          "empty frame: exactly one of hello, register, deregister, batch_register, subscribe, "
              + "unsubscribe, push_ack, ping, drain, query, credentials must be set"));
    }
    Session s = call.session();
    if (kind == ClientFrame.FrameCase.HELLO) {
      if (s != null) {
        throw new ProtocolViolation(Status.FAILED_PRECONDITION.withDescription(
            "second hello on one stream: a session says hello once; open a new stream to start over"));
      }
      hello(call, frame.getRequestId(), frame.getHello());
      return;
    }
    if (s == null) {
      throw new ProtocolViolation(Status.FAILED_PRECONDITION.withDescription(
          "the first frame must be hello, got " + kind.name().toLowerCase(Locale.ROOT) + " (request_id \""
              + LogText.of(frame.getRequestId()) + "\")"));
    }
    if (kind == ClientFrame.FrameCase.PUSH_ACK) {
      s.ack(frame.getPushAck().getPushId(), frame.getPushAck().getResync());
      return;
    }
    String requestId = frame.getRequestId();
    RequestCounters counters = sessions.requests();
    long start = counters.start();
    String type = java.util.Objects.requireNonNull(FRAME_TYPES.get(kind));
    try {
      checkRequestId(requestId);
      boolean counted = false; // an asynchronous request is counted when it completes
      switch (kind) {
        case REGISTER -> {
          var r = frame.getRegister();
          ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
          answer(call, requestId, counters.track(ROSTER, type, s.register(key, ProtoMapper.ephemeralInstance(r.getInstance())), start));
          counted = true;
        }
        case DEREGISTER -> {
          var r = frame.getDeregister();
          answer(call, requestId, counters.track(ROSTER, type, s.deregister(
              ProtoMapper.serviceKey(r.getService(), s.info().namespace()), ProtoMapper.instanceKey(r.getInstance())), start));
          counted = true;
        }
        case BATCH_REGISTER -> {
          var r = frame.getBatchRegister();
          ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
          List<Instance> list = new ArrayList<>(r.getInstancesCount());
          for (int i = 0; i < r.getInstancesCount(); i++) {
            list.add(ProtoMapper.ephemeralInstance(r.getInstances(i), i));
          }
          answer(call, requestId, counters.track(ROSTER, type, s.batchRegister(key, list), start));
          counted = true;
        }
        case SUBSCRIBE -> {
          var r = frame.getSubscribe();
          ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
          Set<String> clusters = ProtoMapper.clusters(r.getClustersList(), "clusters");
          // The ok result goes out before the push of the current state.
          s.subscribe(key, clusters, () -> ok(call, requestId));
        }
        case UNSUBSCRIBE -> {
          s.unsubscribe(ProtoMapper.serviceKey(frame.getUnsubscribe().getService(), s.info().namespace()));
          ok(call, requestId);
        }
        case PING -> {
          call.write(ServerFrame.newBuilder().setRequestId(requestId).setPong(Pong.getDefaultInstance()).build());
          counted = true; // a keepalive, not a request
        }
        case QUERY -> {
          s.check(Permission.READ, ProtoMapper.serviceKey(frame.getQuery().getService(), s.info().namespace()));
          result(call, requestId, Result.newBuilder().setOk(true)
              .setQuery(queries.apply(frame.getQuery(), s.info().namespace())).build());
        }
        case CREDENTIALS -> {
          hellos.renew(s, frame.getCredentials().getToken(), "credentials.token");
          ok(call, requestId);
        }
        case DRAIN -> {
          Duration timeout = DrainTimeouts.timeout("drain.timeout_ms", frame.getDrain().getTimeoutMs());
          call.whenDone(counters.track(ROSTER, type, sessions.drain(s, timeout), start), (counts, failed) ->
              result(call, requestId, failed != null ? Errors.toResult(Errors.cause(failed))
                  : Result.newBuilder().setOk(true).setDrain(Drains.toProto(counts)).build()));
          counted = true;
        }
        default -> throw new IllegalStateException("unhandled frame " + kind);
      }
      if (!counted) {
        counters.count(ROSTER, type, (Throwable) null, start);
      }
    } catch (RuntimeException e) {
      counters.count(ROSTER, type, e, start);
      result(call, echo(requestId), Errors.toResult(e));
    }
  }

  private void hello(SessionCall call, String requestId, Hello h) {
    long start = sessions.requests().start();
    String refused = admission.refusal();
    if (refused != null) {
      sessions.requests().count(ROSTER, "hello", "unavailable", start);
      throw new ProtocolViolation(Status.UNAVAILABLE.withDescription(refused
          + ": no new sessions here; connect to another server, or to this address again once it is back"));
    }
    try {
      checkRequestId(requestId);
      Session opened = hellos.open(new Hellos.Hello(h.getClientId(), h.getNamespace(), h.getClientName(),
          h.getClientVersion(), h.getLabelsMap(), h.getFeaturesList().contains(PushEncoder.FEATURE_DELTA),
          h.getSessionSeq()),
          h.getToken(), call.peerCertificates, call, call.scope, call.remoteAddress);
      SessionInfo info = opened.info();
      long warmingMs = SessionService.warmUpMillis(warmUp);
      call.write(ServerFrame.newBuilder().setRequestId(requestId).setWelcome(Welcome.newBuilder()
          .setConnectionId(info.connectionId())
          .setNodeId(nodeId)
          .setKeepaliveTimeMs(keepaliveTime.toMillis())
          .setKeepaliveTimeoutMs(keepaliveTimeout.toMillis())
          .setPushAckTimeoutMs(ackTimeout.toMillis())
          .setServerVersion(version)
          .addAllFeatures(FEATURES)
          .setWarmUpRemainingMs(warmingMs)).build());
      if (warmingMs > 0) {
        // After the welcome: the end, if it comes now, is told after it (here or by warmUpDone).
        call.toldWarming = true;
        if (warmUp.isWarm()) {
          call.write(WARM_UP_DONE);
        }
      }
      if (!call.opened(opened)) {
        // The stream died while we said hello: nothing may outlive it. Closed outside the
        // writer's lock (the lock order elsewhere is session, then the writer's lock).
        sessions.close(opened);
        return;
      }
      log.info("Session opened: conn={} client={} name={} remote={} sessions={}", info.connectionId(),
          LogText.of(info.clientId()), LogText.of(info.clientName()), LogText.of(info.remoteAddress()),
          sessions.count());
      sessions.requests().count(ROSTER, "hello", (Throwable) null, start);
    } catch (RegistryException e) {
      sessions.requests().count(ROSTER, "hello", e, start);
      result(call, echo(requestId), Errors.toResult(e));
    }
  }

  private static void checkRequestId(String requestId) {
    if (requestId.isEmpty() || requestId.length() > MAX_REQUEST_ID) {
      throw RegistryException.invalid("request_id", requestId, "1.." + MAX_REQUEST_ID + " characters");
    }
  }

  /** A request id as the answer may echo it: a valid one as is, an invalid one not at all. */
  private static String echo(String requestId) {
    return requestId.isEmpty() || requestId.length() > MAX_REQUEST_ID ? "" : requestId;
  }

  /** Answers ok once {@code applied} completes, or with the error that failed it. */
  private void answer(SessionCall call, String requestId, CompletableFuture<?> applied) {
    call.whenApplied(applied, () -> answered(call, requestId, applied));
  }

  private void answered(SessionCall call, String requestId, CompletableFuture<?> applied) {
    applied.whenComplete((done, failed) -> {
      if (failed == null) {
        ok(call, requestId);
      } else {
        result(call, requestId, Errors.toResult(Errors.cause(failed)));
      }
    });
  }

  private static void ok(SessionCall call, String requestId) {
    result(call, requestId, Result.newBuilder().setOk(true).build());
  }

  private static void result(SessionCall call, String requestId, Result result) {
    call.write(ServerFrame.newBuilder().setRequestId(requestId).setResult(result).build());
  }

  /** A frame that breaks the protocol: the stream ends with this status. */
  static final class ProtocolViolation extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient Status status;

    ProtocolViolation(Status status) {
      super(status.getDescription(), null, false, false);
      this.status = status;
    }
  }
}
