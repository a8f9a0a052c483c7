package io.roster.server.rpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.roster.proto.v1.ClientFrame;
import io.roster.proto.v1.Hello;
import io.roster.proto.v1.Pong;
import io.roster.proto.v1.QueryInstancesRequest;
import io.roster.proto.v1.QueryInstancesResponse;
import io.roster.proto.v1.Reconnect;
import io.roster.proto.v1.Result;
import io.roster.proto.v1.ServerFrame;
import io.roster.proto.v1.SessionGrpc;
import io.roster.proto.v1.Welcome;
import io.roster.server.model.Instance;
import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushPayload;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code roster.v1.Session/Connect}: adapts one bidirectional stream to one {@link Session}.
 *
 * <p>The method is registered with a response marshaller that also takes pre-encoded frames
 * ({@link EncodedFrame}), so a push is serialised once per revision, not once per subscriber.
 * Reflection still describes it with the generated schema.
 *
 * <p>Inbound flow control is manual: the next client frame is requested only while the
 * outbound side is ready, so a client that writes but never reads cannot make the server
 * buffer answers without bound.
 */
final class SessionService {

  private static final Logger log = LoggerFactory.getLogger(SessionService.class);
  private static final int MAX_REQUEST_ID = 64;

  /** Frames beyond the base protocol that this server answers, told in {@code welcome}. */
  static final List<String> FEATURES = List.of("query");

  private final SessionManager sessions;
  private final BiFunction<QueryInstancesRequest, String, QueryInstancesResponse> queries;
  private volatile String nodeId = "";
  private final Duration keepaliveTime;
  private final Duration keepaliveTimeout;
  private final Duration ackTimeout;
  private final Duration silenceLimit;
  private final Scheduler scheduler;
  private final String version;
  private final Set<Call> calls = ConcurrentHashMap.newKeySet();
  private final Function<PushPayload, Object> encoder = SessionService::encodePush;

  /** @param queries answers a {@code query} frame given the session's namespace */
  SessionService(SessionManager sessions, BiFunction<QueryInstancesRequest, String, QueryInstancesResponse> queries,
      Duration keepaliveTime, Duration keepaliveTimeout, Duration ackTimeout, Scheduler scheduler, String version) {
    this.sessions = sessions;
    this.queries = queries;
    this.keepaliveTime = keepaliveTime;
    this.keepaliveTimeout = keepaliveTimeout;
    this.silenceLimit = keepaliveTime.plus(keepaliveTimeout);
    this.ackTimeout = ackTimeout;
    this.scheduler = scheduler;
    this.version = version;
  }

  ServerServiceDefinition definition() {
    MethodDescriptor<ClientFrame, Object> connect = SessionGrpc.getConnectMethod().toBuilder(
        ProtoUtils.marshaller(ClientFrame.getDefaultInstance()), new EncodedFrame.Marshaller()).build();
    ServiceDescriptor descriptor = ServiceDescriptor.newBuilder(SessionGrpc.SERVICE_NAME)
        .setSchemaDescriptor(SessionGrpc.getServiceDescriptor().getSchemaDescriptor())
        .addMethod(connect)
        .build();
    return ServerServiceDefinition.builder(descriptor)
        .addMethod(connect, ServerCalls.asyncBidiStreamingCall(this::open))
        .build();
  }

  /** Sets the node id told in {@code welcome}; known once the port is bound. */
  void nodeId(String id) {
    this.nodeId = id;
  }

  /** Asks every connected client to reconnect elsewhere (the server is stopping). */
  void reconnectAll(String reason) {
    ServerFrame frame = ServerFrame.newBuilder()
        .setReconnect(Reconnect.newBuilder().setReason(reason)).build();
    for (Call c : calls) {
      c.write(frame);
    }
  }

  int openCalls() {
    return calls.size();
  }

  private StreamObserver<ClientFrame> open(StreamObserver<Object> responseObserver) {
    ServerCallStreamObserver<Object> out = (ServerCallStreamObserver<Object>) responseObserver;
    Call call = new Call(out);
    out.disableAutoRequest();
    out.setOnReadyHandler(call::onReady);
    out.setOnCancelHandler(() -> call.end("cancelled"));
    calls.add(call);
    out.request(1);
    call.watchSilence(silenceLimit);
    return call;
  }

  private static Object encodePush(PushPayload p) {
    return new EncodedFrame(PushEncoder.encode(p));
  }

  /** One Connect stream. Frames arrive one at a time (manual flow control). */
  private final class Call implements StreamObserver<ClientFrame>, Outbound {
    private final ServerCallStreamObserver<Object> out;
    private final String remoteAddress = RemoteAddressInterceptor.current();
    private final Object writeLock = new Object();
    private volatile Session session;
    private boolean ended;       // guarded by writeLock
    private boolean wantsNext;   // guarded by writeLock
    /** When the last client frame arrived, or reading resumed after a pause of ours. */
    private volatile long lastHeardNanos = scheduler.nanoTime();

    Call(ServerCallStreamObserver<Object> out) {
      this.out = out;
    }

    /**
     * Application-level liveness. A client must send some frame (ping, when it has nothing
     * else) at least every keepalive_time; a stream silent for keepalive_time +
     * keepalive_timeout is ended as a dead peer. HTTP/2 keepalive would do this too, but gRPC
     * Java will not ping more often than every 10 s, which puts a frozen peer's removal at
     * ~15 s instead of ~10 s. While we ourselves stop reading (the client is not reading our
     * frames), silence is not held against it; HTTP/2 keepalive still covers that case.
     */
    void watchSilence(Duration delay) {
      scheduler.schedule(this::checkSilence, delay);
    }

    private void checkSilence() {
      boolean paused;
      synchronized (writeLock) {
        if (ended) {
          return;
        }
        paused = wantsNext;
      }
      long silentNanos = scheduler.nanoTime() - lastHeardNanos;
      if (paused || silentNanos < silenceLimit.toNanos()) {
        watchSilence(paused ? silenceLimit : silenceLimit.minusNanos(silentNanos));
        return;
      }
      String why = "no frame from the client for " + silenceLimit.toMillis() + " ms (keepalive_time_ms "
          + keepaliveTime.toMillis() + " + keepalive_timeout_ms " + keepaliveTimeout.toMillis()
          + "); a client must send ping when it has nothing else to say";
      end("silent peer");
      synchronized (writeLock) {
        try {
          out.onError(Status.UNAVAILABLE.withDescription(why).asRuntimeException());
        } catch (RuntimeException ignored) {
          // Already cancelled.
        }
      }
    }

    @Override
    public void onNext(ClientFrame frame) {
      lastHeardNanos = scheduler.nanoTime();
      try {
        handle(frame);
      } catch (ProtocolViolation v) {
        violate(v.status);
        return;
      }
      requestNext();
    }

    @Override
    public void onError(Throwable t) {
      end("transport: " + Status.fromThrowable(t).getCode());
    }

    @Override
    public void onCompleted() {
      end("goodbye");
      synchronized (writeLock) {
        try {
          out.onCompleted();
        } catch (RuntimeException ignored) {
          // Already cancelled: nothing to complete.
        }
      }
    }

    // --- Outbound, for the session's PushQueue ---

    @Override
    public boolean isReady() {
      synchronized (writeLock) {
        return !ended && out.isReady();
      }
    }

    @Override
    public void send(PushPayload payload) {
      write(payload.encoded(encoder));
    }

    void onReady() {
      Session s = session;
      if (s != null) {
        s.onReady();
      }
      boolean request;
      synchronized (writeLock) {
        request = wantsNext && !ended;
        wantsNext = false;
      }
      if (request) {
        lastHeardNanos = scheduler.nanoTime();
        out.request(1);
      }
    }

    private void requestNext() {
      boolean request;
      synchronized (writeLock) {
        request = !ended && out.isReady();
        wantsNext = !ended && !request;
      }
      if (request) {
        out.request(1);
      }
    }

    void write(Object message) {
      synchronized (writeLock) {
        if (ended) {
          return;
        }
        try {
          out.onNext(message);
        } catch (RuntimeException e) {
          // The call was cancelled under us; its cancel handler ends the session.
          ended = true;
        }
      }
    }

    private void handle(ClientFrame frame) {
      ClientFrame.FrameCase kind = frame.getFrameCase();
      if (kind == ClientFrame.FrameCase.FRAME_NOT_SET) {
        throw new ProtocolViolation(Status.INVALID_ARGUMENT.withDescription(
            "empty frame: exactly one of hello, register, deregister, batch_register, subscribe, "
                + "unsubscribe, push_ack, ping, drain, query must be set"));
      }
      Session s = session;
      if (kind == ClientFrame.FrameCase.HELLO) {
        if (s != null) {
          throw new ProtocolViolation(Status.FAILED_PRECONDITION.withDescription(
              "second hello on one stream: a session says hello once; open a new stream to start over"));
        }
        hello(frame.getRequestId(), frame.getHello());
        return;
      }
      if (s == null) {
        throw new ProtocolViolation(Status.FAILED_PRECONDITION.withDescription(
            "the first frame must be hello, got " + kind.name().toLowerCase() + " (request_id \""
                + frame.getRequestId() + "\")"));
      }
      if (kind == ClientFrame.FrameCase.PUSH_ACK) {
        s.ack(frame.getPushAck().getPushId());
        return;
      }
      String requestId = frame.getRequestId();
      try {
        checkRequestId(requestId);
        switch (kind) {
          case REGISTER -> {
            var r = frame.getRegister();
            ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
            s.register(key, ProtoMapper.ephemeralInstance(r.getInstance()));
            ok(requestId);
          }
          case DEREGISTER -> {
            var r = frame.getDeregister();
            s.deregister(ProtoMapper.serviceKey(r.getService(), s.info().namespace()),
                ProtoMapper.instanceKey(r.getInstance()));
            ok(requestId);
          }
          case BATCH_REGISTER -> {
            var r = frame.getBatchRegister();
            ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
            List<Instance> list = new ArrayList<>(r.getInstancesCount());
            for (int i = 0; i < r.getInstancesCount(); i++) {
              list.add(ProtoMapper.ephemeralInstance(r.getInstances(i), i));
            }
            s.batchRegister(key, list);
            ok(requestId);
          }
          case SUBSCRIBE -> {
            var r = frame.getSubscribe();
            ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
            Set<String> clusters = ProtoMapper.clusters(r.getClustersList(), "clusters");
            // The ok result goes out before the push of the current state.
            s.subscribe(key, clusters, () -> ok(requestId));
          }
          case UNSUBSCRIBE -> {
            s.unsubscribe(ProtoMapper.serviceKey(frame.getUnsubscribe().getService(), s.info().namespace()));
            ok(requestId);
          }
          case PING -> write(ServerFrame.newBuilder().setRequestId(requestId).setPong(Pong.getDefaultInstance()).build());
          case QUERY -> result(requestId, Result.newBuilder().setOk(true)
              .setQuery(queries.apply(frame.getQuery(), s.info().namespace())).build());
          case DRAIN -> {
            Duration timeout = Drains.timeout("drain.timeout_ms", frame.getDrain().getTimeoutMs());
            sessions.drain(s, timeout).thenAccept(counts -> result(requestId,
                Result.newBuilder().setOk(true).setDrain(Drains.toProto(counts)).build()));
          }
          default -> throw new IllegalStateException("unhandled frame " + kind);
        }
      } catch (RuntimeException e) {
        result(requestId, Errors.toResult(e));
      }
    }

    private void hello(String requestId, Hello h) {
      try {
        checkRequestId(requestId);
        if (h.getClientId().isEmpty() || h.getClientId().length() > 128) {
          throw RegistryException.invalid("hello.client_id", h.getClientId(), "1..128 characters, stable across reconnects");
        }
        String namespace = h.getNamespace().isEmpty() ? Names.DEFAULT_NAMESPACE : h.getNamespace();
        Names.checkSimpleName("hello.namespace", namespace, Names.MAX_NAMESPACE);
        if (h.getClientName().length() > 128) {
          throw RegistryException.invalid("hello.client_name", h.getClientName(), "at most 128 characters");
        }
        if (h.getClientVersion().length() > 64) {
          throw RegistryException.invalid("hello.client_version", h.getClientVersion(), "at most 64 characters");
        }
        Names.checkMetadata("hello.labels", h.getLabelsMap());
        SessionInfo info = new SessionInfo(sessions.nextConnectionId(), h.getClientId(), namespace,
            h.getClientName(), h.getClientVersion(), h.getLabelsMap(), remoteAddress, System.currentTimeMillis());
        write(ServerFrame.newBuilder().setRequestId(requestId).setWelcome(Welcome.newBuilder()
            .setConnectionId(info.connectionId())
            .setNodeId(nodeId)
            .setKeepaliveTimeMs(keepaliveTime.toMillis())
            .setKeepaliveTimeoutMs(keepaliveTimeout.toMillis())
            .setPushAckTimeoutMs(ackTimeout.toMillis())
            .setServerVersion(version)
            .addAllFeatures(FEATURES)).build());
        Session opened = sessions.open(info, this);
        session = opened;
        boolean diedMeanwhile;
        synchronized (writeLock) {
          diedMeanwhile = ended;
        }
        if (diedMeanwhile) {
          // The stream died while we said hello: nothing may outlive it. Closed outside the
          // write lock (the lock order elsewhere is session, then write lock).
          sessions.close(opened);
          return;
        }
        log.info("Session opened: conn={} client={} name={} remote={} sessions={}", info.connectionId(),
            info.clientId(), info.clientName(), info.remoteAddress(), sessions.count());
      } catch (RegistryException e) {
        result(requestId, Errors.toResult(e));
      }
    }

    private void checkRequestId(String requestId) {
      if (requestId.isEmpty() || requestId.length() > MAX_REQUEST_ID) {
        throw RegistryException.invalid("request_id", requestId, "1.." + MAX_REQUEST_ID + " characters");
      }
    }

    private void ok(String requestId) {
      result(requestId, Result.newBuilder().setOk(true).build());
    }

    private void result(String requestId, Result result) {
      write(ServerFrame.newBuilder().setRequestId(requestId).setResult(result).build());
    }

    private void violate(Status status) {
      end("protocol violation: " + status.getDescription());
      synchronized (writeLock) {
        try {
          out.onError(status.asRuntimeException());
        } catch (RuntimeException ignored) {
          // Already cancelled.
        }
      }
    }

    /** Ends the session once, whatever ended the stream. */
    void end(String reason) {
      synchronized (writeLock) {
        ended = true;
      }
      calls.remove(this);
      Session s = session;
      if (s != null) {
        Session.CloseSummary summary = sessions.close(s);
        if (summary != null) {
          log.info("Session closed: conn={} client={} reason={} removed instances={} subscriptions={} sessions={}",
              s.info().connectionId(), s.info().clientId(), reason, summary.instances(), summary.subscriptions(),
              sessions.count());
        }
      }
    }
  }

  /** A frame that breaks the protocol: the stream ends with this status. */
  private static final class ProtocolViolation extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient Status status;

    ProtocolViolation(Status status) {
      super(status.getDescription(), null, false, false);
      this.status = status;
    }
  }
}
