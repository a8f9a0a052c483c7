package io.roster.server.rpc;

import static io.roster.server.session.RequestCounters.Protocol.ROSTER;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.Status;
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
import io.roster.proto.v1.WarmUpDone;
import io.roster.proto.v1.Welcome;
import io.roster.server.auth.Permission;
import io.roster.server.model.Instance;
import io.roster.server.naming.DrainTimeouts;
import io.roster.server.naming.Hellos;
import io.roster.server.naming.LogText;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushPayload;
import io.roster.server.registry.WarmUp;
import io.roster.server.session.Admission;
import io.roster.server.session.Door;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.Scope;
import io.roster.server.session.Session;
import io.roster.server.session.SessionInfo;
import io.roster.server.session.SessionManager;
import io.roster.server.stream.StreamWriter;
import io.roster.server.time.Scheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
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
final class SessionService implements Door {

  private static final Logger log = LoggerFactory.getLogger(SessionService.class);
  private static final int MAX_REQUEST_ID = 64;
  /**
   * Frames handled in a row for one stream before the next read is handed back to the event
   * loop's queue: a client flooding its stream then costs other connections on the same event
   * loop at most this many frames' work (~0.5 ms) between their own reads and timers.
   */
  static final int FRAMES_PER_TURN = 32;
  /**
   * Changes one stream may have waiting for the cluster's log; its next frame is read once
   * fewer are (flow control back to the client). A standalone server answers at once.
   */
  static final int MAX_WRITES_IN_FLIGHT = 64;

  /** Frames beyond the base protocol that this server answers, told in {@code welcome}. */
  /** Each frame's name in the request metrics: the frame case in lower case. */
  private static final java.util.Map<ClientFrame.FrameCase, String> FRAME_TYPES = frameTypes();

  private static java.util.Map<ClientFrame.FrameCase, String> frameTypes() {
    java.util.Map<ClientFrame.FrameCase, String> types = new java.util.EnumMap<>(ClientFrame.FrameCase.class);
    for (ClientFrame.FrameCase c : ClientFrame.FrameCase.values()) {
      types.put(c, c.name().toLowerCase(Locale.ROOT));
    }
    return types;
  }

  static final List<String> FEATURES = List.of("query", PushEncoder.FEATURE_DELTA, "credentials");

  /** Told once to the sessions whose welcome said the server was warming up, when it is warm. */
  private static final ServerFrame WARM_UP_DONE =
      ServerFrame.newBuilder().setWarmUpDone(WarmUpDone.getDefaultInstance()).build();

  private final SessionManager sessions;
  private final Hellos hellos;
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
  private final int maxFrameBytes;
  /** Whether new sessions are welcome; the wait for the last Connect stream once stopping. */
  private final Admission admission = new Admission(calls::isEmpty);
  private final WarmUp warmUp;

  /**
   * @param queries answers a {@code query} frame given the session's namespace
   * @param warmUp told in {@code welcome}; its end is told to the sessions that heard of it
   */
  SessionService(SessionManager sessions, BiFunction<QueryInstancesRequest, String, QueryInstancesResponse> queries,
      Duration keepaliveTime, Duration keepaliveTimeout, Duration ackTimeout, Scheduler scheduler, String version,
      int maxFrameBytes, WarmUp warmUp) {
    this.sessions = sessions;
    this.hellos = new Hellos(sessions);
    this.queries = queries;
    this.keepaliveTime = keepaliveTime;
    this.keepaliveTimeout = keepaliveTimeout;
    this.silenceLimit = keepaliveTime.plus(keepaliveTimeout);
    this.ackTimeout = ackTimeout;
    this.scheduler = scheduler;
    this.version = version;
    this.maxFrameBytes = maxFrameBytes;
    this.warmUp = warmUp;
    warmUp.onWarm(this::warmUpDone);
  }

  ServerServiceDefinition definition() {
    MethodDescriptor<Object, Object> connect = SessionGrpc.getConnectMethod().toBuilder(
        new ClientFrameMarshaller(maxFrameBytes), new EncodedFrame.Marshaller()).build();
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

  /**
   * The server is about to stop: new Connect streams (and a hello on a stream opened just before)
   * are refused with UNAVAILABLE from now on, while the sessions already here stay until {@link
   * #moveAll}. A session welcomed now would take its client's instances (its redo) only to
   * end with the server a moment later.
   */
  @Override
  public void refuseNew(String reason) {
    admission.stop(reason);
  }

  /**
   * The server is stopping: new Connect streams (and a hello on a stream opened just before)
   * are refused with UNAVAILABLE, which clients take as "try another server, or this one
   * later", and every connected client is asked to reconnect elsewhere: to the server {@code
   * suggest} names for it (a cluster spreads them over the live members), or, when it names
   * none, to the client's next server.
   */
  @Override
  public void moveAll(String reason, java.util.function.Supplier<String> suggest) {
    refuseNew(reason);
    for (Call c : calls) {
      c.write(ServerFrame.newBuilder()
          .setReconnect(Reconnect.newBuilder().setReason(reason).setSuggestedServer(suggest.get())).build());
    }
    admission.connectionEnded();
  }

  /**
   * Refuses new sessions with UNAVAILABLE for now ({@code reason}), or accepts them again
   * ({@code null}): a cluster member that is catching up, or cut off from the majority.
   */
  @Override
  public void refuse(@Nullable String reason) {
    admission.refuse(reason);
  }

  /**
   * Waits until every Connect stream has ended after {@link #moveAll}, or {@code timeout}.
   *
   * @return whether they all ended in time
   */
  @Override
  public boolean awaitAllEnded(Duration timeout) throws InterruptedException {
    return admission.awaitAllEnded(timeout);
  }

  /** The warm-up ended: every session whose welcome said it was warming hears of it. */
  private void warmUpDone() {
    for (Call c : calls) {
      if (c.toldWarming) {
        c.write(WARM_UP_DONE);
      }
    }
  }

  int openCalls() {
    return calls.size();
  }

  private StreamObserver<Object> open(StreamObserver<Object> responseObserver) {
    ServerCallStreamObserver<Object> out = (ServerCallStreamObserver<Object>) responseObserver;
    String refused = admission.refusal();
    if (refused != null) {
      out.onError(Status.UNAVAILABLE.withDescription(refused + ": no new sessions here; connect to another server, "
          + "or to this address again once it is back").asRuntimeException());
      return new NoFrames();
    }
    Call call = new Call(out);
    out.disableAutoRequest();
    out.setOnReadyHandler(call::onReady);
    out.setOnCancelHandler(() -> call.end("cancelled"));
    calls.add(call);
    out.request(1);
    call.watchSilence(silenceLimit);
    return call;
  }

  /** The warm-up left, in whole milliseconds rounded up (a warming server never says 0). */
  static long warmUpMillis(WarmUp warmUp) {
    long nanos = warmUp.remaining().toNanos();
    return nanos <= 0 ? 0 : (nanos + 999_999) / 1_000_000;
  }

  static Object encodePush(PushPayload p) {
    return new EncodedFrame(PushEncoder.encode(p));
  }

  /** The inbound side of a stream refused at once: whatever still arrives is dropped. */
  private static final class NoFrames implements StreamObserver<Object> {
    @Override
    public void onNext(Object value) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onCompleted() {}
  }

  /** One Connect stream. Frames arrive one at a time (manual flow control). */
  private final class Call implements StreamObserver<Object>, Outbound {
    private final ServerCallStreamObserver<Object> out;
    private final String remoteAddress = Connections.remoteAddress();
    private final Scope scope = Connections.scope();
    /** The client certificate this stream's connection verified: an identity when the hello has no token. */
    private final List<java.security.cert.X509Certificate> peerCertificates = Connections.peerCertificates();
    /** Frames handled since the stream last gave its turn back to the event loop. */
    private int framesThisTurn;
    /** Every write to the stream, and whether it ended. */
    private final StreamWriter<Object> writer;
    /** Guards the inbound flow control below; taken before the writer's lock, never after. */
    private final Object flow = new Object();
    private volatile @Nullable Session session;
    /** Its welcome said the server was warming up; set after the welcome was written. */
    volatile boolean toldWarming;
    private boolean wantsNext;   // guarded by flow
    /** Changes submitted and not yet answered (a cluster member waits for the log). */
    private int writesInFlight;  // guarded by flow
    /** Reading stopped until fewer than MAX_WRITES_IN_FLIGHT changes are in flight. */
    private boolean pausedForWrites; // guarded by flow
    /** When the last client frame arrived, or reading resumed after a pause of ours. */
    private volatile long lastHeardNanos = scheduler.nanoTime();

    Call(ServerCallStreamObserver<Object> out) {
      this.out = out;
      this.writer = new StreamWriter<>(out);
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
      synchronized (flow) {
        if (writer.ended()) {
          return;
        }
        paused = wantsNext || pausedForWrites;
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
      writer.fail(Status.UNAVAILABLE.withDescription(why));
    }

    @Override
    public void onNext(Object message) {
      lastHeardNanos = scheduler.nanoTime();
      if (message instanceof ClientFrameMarshaller.Oversized big) {
        log.warn("Session frame of {} bytes from {} refused: over the limit of {} bytes (--max-message-size)",
            big.bytes(), LogText.of(remoteAddress), maxFrameBytes);
        violate(Status.RESOURCE_EXHAUSTED.withDescription("frame of " + big.bytes() + " bytes is over the limit of "
            + maxFrameBytes + " bytes (--max-message-size); the stream is ended"));
        return;
      }
      try {
        handle((ClientFrame) message);
      } catch (ProtocolViolation v) {
        violate(v.status);
        return;
      }
      synchronized (flow) {
        if (writesInFlight >= MAX_WRITES_IN_FLIGHT) {
          // The next frame is read once the log has taken some of these (writeAnswered).
          pausedForWrites = true;
          return;
        }
      }
      requestNext();
    }

    private void writeAnswered() {
      boolean resume;
      synchronized (flow) {
        writesInFlight--;
        resume = pausedForWrites && writesInFlight < MAX_WRITES_IN_FLIGHT;
        if (resume) {
          pausedForWrites = false;
        }
      }
      if (resume) {
        lastHeardNanos = scheduler.nanoTime();
        requestNext();
      }
    }

    @Override
    public void onError(Throwable t) {
      end("transport: " + Status.fromThrowable(t).getCode());
    }

    @Override
    public void onCompleted() {
      end("goodbye");
      writer.complete();
    }

    // --- Outbound, for the session's PushQueue ---

    @Override
    public boolean move(String reason, String suggestedServer) {
      write(ServerFrame.newBuilder().setReconnect(Reconnect.newBuilder().setReason(reason)
          .setSuggestedServer(suggestedServer)).build());
      return true;
    }

    @Override
    public boolean end(RegistryException why) {
      violate(Errors.status(why));
      return true;
    }

    @Override
    public boolean isReady() {
      return writer.isReady();
    }

    @Override
    public int send(PushPayload payload) {
      EncodedFrame frame = (EncodedFrame) payload.encoded(encoder);
      write(frame);
      return frame.size();
    }

    void onReady() {
      Session s = session;
      if (s != null) {
        s.onReady();
      }
      boolean request;
      synchronized (flow) {
        request = wantsNext && !writer.ended();
        wantsNext = false;
      }
      if (request) {
        lastHeardNanos = scheduler.nanoTime();
        out.request(1);
      }
    }

    private void requestNext() {
      boolean request;
      synchronized (flow) {
        request = writer.isReady();
        wantsNext = !writer.ended() && !request;
      }
      if (!request) {
        return;
      }
      if (++framesThisTurn < FRAMES_PER_TURN) {
        // Delivered at once from what gRPC has buffered, still on this event-loop task.
        out.request(1);
      } else {
        // Asked from another thread, the request joins the back of the event loop's queue:
        // other connections' reads, pings and pushes go first.
        framesThisTurn = 0;
        scheduler.execute(() -> out.request(1));
      }
    }

    /** Writes one frame; a no-op once the stream ended (or was cancelled under us: its cancel handler ends the session). */
    void write(Object message) {
      writer.write(message);
    }

    private void handle(ClientFrame frame) {
      ClientFrame.FrameCase kind = frame.getFrameCase();
      if (kind == ClientFrame.FrameCase.FRAME_NOT_SET) {
        throw new ProtocolViolation(Status.INVALID_ARGUMENT.withDescription(
            "empty frame: exactly one of hello, register, deregister, batch_register, subscribe, "
                + "unsubscribe, push_ack, ping, drain, query, credentials must be set"));
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
            "the first frame must be hello, got " + kind.name().toLowerCase(Locale.ROOT) + " (request_id \""
                + LogText.of(frame.getRequestId()) + "\")"));
      }
      if (kind == ClientFrame.FrameCase.PUSH_ACK) {
        s.ack(frame.getPushAck().getPushId(), frame.getPushAck().getResync());
        return;
      }
      String requestId = frame.getRequestId();
      RequestCounters counters = sessions.requests();
      String type = java.util.Objects.requireNonNull(FRAME_TYPES.get(kind));
      try {
        checkRequestId(requestId);
        boolean counted = false; // an asynchronous request is counted when it completes
        switch (kind) {
          case REGISTER -> {
            var r = frame.getRegister();
            ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
            answer(requestId, counters.track(ROSTER, type, s.register(key, ProtoMapper.ephemeralInstance(r.getInstance()))));
            counted = true;
          }
          case DEREGISTER -> {
            var r = frame.getDeregister();
            answer(requestId, counters.track(ROSTER, type, s.deregister(
                ProtoMapper.serviceKey(r.getService(), s.info().namespace()), ProtoMapper.instanceKey(r.getInstance()))));
            counted = true;
          }
          case BATCH_REGISTER -> {
            var r = frame.getBatchRegister();
            ServiceKey key = ProtoMapper.serviceKey(r.getService(), s.info().namespace());
            List<Instance> list = new ArrayList<>(r.getInstancesCount());
            for (int i = 0; i < r.getInstancesCount(); i++) {
              list.add(ProtoMapper.ephemeralInstance(r.getInstances(i), i));
            }
            answer(requestId, counters.track(ROSTER, type, s.batchRegister(key, list)));
            counted = true;
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
          case PING -> {
            write(ServerFrame.newBuilder().setRequestId(requestId).setPong(Pong.getDefaultInstance()).build());
            counted = true; // a keepalive, not a request
          }
          case QUERY -> {
            s.check(Permission.READ, ProtoMapper.serviceKey(frame.getQuery().getService(), s.info().namespace()));
            result(requestId, Result.newBuilder().setOk(true)
                .setQuery(queries.apply(frame.getQuery(), s.info().namespace())).build());
          }
          case CREDENTIALS -> {
            hellos.renew(s, frame.getCredentials().getToken(), "credentials.token");
            ok(requestId);
          }
          case DRAIN -> {
            Duration timeout = DrainTimeouts.timeout("drain.timeout_ms", frame.getDrain().getTimeoutMs());
            counters.track(ROSTER, type, sessions.drain(s, timeout)).whenComplete((counts, failed) ->
                result(requestId, failed != null ? Errors.toResult(Errors.cause(failed))
                    : Result.newBuilder().setOk(true).setDrain(Drains.toProto(counts)).build()));
            counted = true;
          }
          default -> throw new IllegalStateException("unhandled frame " + kind);
        }
        if (!counted) {
          counters.count(ROSTER, type, (Throwable) null);
        }
      } catch (RuntimeException e) {
        counters.count(ROSTER, type, e);
        result(echo(requestId), Errors.toResult(e));
      }
    }

    private void hello(String requestId, Hello h) {
      String refused = admission.refusal();
      if (refused != null) {
        sessions.requests().count(ROSTER, "hello", "unavailable");
        throw new ProtocolViolation(Status.UNAVAILABLE.withDescription(refused
            + ": no new sessions here; connect to another server, or to this address again once it is back"));
      }
      try {
        checkRequestId(requestId);
        Session opened = hellos.open(new Hellos.Hello(h.getClientId(), h.getNamespace(), h.getClientName(),
            h.getClientVersion(), h.getLabelsMap(), h.getFeaturesList().contains(PushEncoder.FEATURE_DELTA),
            h.getSessionSeq()),
            h.getToken(), peerCertificates, this, scope, remoteAddress);
        SessionInfo info = opened.info();
        long warmingMs = warmUpMillis(warmUp);
        write(ServerFrame.newBuilder().setRequestId(requestId).setWelcome(Welcome.newBuilder()
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
          toldWarming = true;
          if (warmUp.isWarm()) {
            write(WARM_UP_DONE);
          }
        }
        session = opened;
        if (writer.ended()) {
          // The stream died while we said hello: nothing may outlive it. Closed outside the
          // writer's lock (the lock order elsewhere is session, then the writer's lock).
          sessions.close(opened);
          return;
        }
        log.info("Session opened: conn={} client={} name={} remote={} sessions={}", info.connectionId(),
            LogText.of(info.clientId()), LogText.of(info.clientName()), LogText.of(info.remoteAddress()),
            sessions.count());
        sessions.requests().count(ROSTER, "hello", (Throwable) null);
      } catch (RegistryException e) {
        sessions.requests().count(ROSTER, "hello", e);
        result(echo(requestId), Errors.toResult(e));
      }
    }

    private void checkRequestId(String requestId) {
      if (requestId.isEmpty() || requestId.length() > MAX_REQUEST_ID) {
        throw RegistryException.invalid("request_id", requestId, "1.." + MAX_REQUEST_ID + " characters");
      }
    }

    /** A request id as the answer may echo it: a valid one as is, an invalid one not at all. */
    private String echo(String requestId) {
      return requestId.isEmpty() || requestId.length() > MAX_REQUEST_ID ? "" : requestId;
    }

    /** Answers ok once {@code applied} completes, or with the error that failed it. */
    private void answer(String requestId, CompletableFuture<?> applied) {
      if (applied.isDone()) {
        answered(requestId, applied);
        return;
      }
      synchronized (flow) {
        writesInFlight++;
      }
      applied.whenComplete((done, failed) -> {
        answered(requestId, applied);
        writeAnswered();
      });
    }

    private void answered(String requestId, CompletableFuture<?> applied) {
      applied.whenComplete((done, failed) -> {
        if (failed == null) {
          ok(requestId);
        } else {
          result(requestId, Errors.toResult(Errors.cause(failed)));
        }
      });
    }

    private void ok(String requestId) {
      result(requestId, Result.newBuilder().setOk(true).build());
    }

    private void result(String requestId, Result result) {
      write(ServerFrame.newBuilder().setRequestId(requestId).setResult(result).build());
    }

    private void violate(Status status) {
      end("protocol violation: " + status.getDescription());
      writer.fail(status);
    }

    /** Ends the session once, whatever ended the stream. */
    void end(String reason) {
      writer.end();
      calls.remove(this);
      Session s = session;
      if (s != null) {
        Session.CloseSummary summary = sessions.close(s);
        if (summary != null) {
          log.info("Session closed: conn={} client={} reason={} removed instances={} subscriptions={} sessions={}",
              s.info().connectionId(), LogText.of(s.info().clientId()), LogText.of(reason), summary.instances(),
              summary.subscriptions(), sessions.count());
        }
      }
      admission.connectionEnded();
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
