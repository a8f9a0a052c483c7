package io.roster.server.nacos;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.roster.proto.nacos.Payload;
import io.roster.server.push.Outbound;
import io.roster.server.push.PushPayload;
import io.roster.server.session.Scope;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import io.roster.server.stream.StreamWriter;
import java.time.Duration;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One registered Nacos connection: its {@link Session} (owner kind NACOS) and the stream that
 * carries its pushes. The session's push queue writes here ({@link Outbound}): a state goes
 * out as a {@code NotifySubscriberRequest} whose {@code requestId} is the state's revision in
 * decimal, and the client's {@code NotifySubscriberResponse}, which copies it, is the ack.
 *
 * <p>It also remembers when the client was last heard from (any unary request or stream
 * message, for {@link ClientDetection}) and whether the server asked it to move ({@code
 * ConnectResetRequest}): a connection that ends after that keeps its instances for {@link
 * #REDO_WAIT}, so that the client's redo on its new connection takes them over unseen.
 *
 * <p>Thread-safe: writes to the stream go through its {@link StreamWriter}; {@link #close} is
 * idempotent and may come from the transport's end, the stream's end or a server stop.
 */
final class NacosConnection implements Outbound, ClientDetection.Watched {

  private static final Logger log = LoggerFactory.getLogger(NacosConnection.class);

  /** The Nacos wire format of a push: one {@link Payload} per revision and view, shared by every Nacos subscriber. */
  static final Function<PushPayload, Object> ENCODER = NacosConnection::encodePush;

  /**
   * How long the instances of a connection that ended after a {@code ConnectResetRequest} stay
   * registered: the Nacos client drops its old connection as soon as the new one is up, and
   * redoes its registrations on the new one within its redo period (3 s by default) after that.
   */
  static final Duration REDO_WAIT = Duration.ofSeconds(10);

  private final String id;
  private final StreamWriter<Payload> out;
  private final SessionManager sessions;
  private final NacosConnections connections;
  private final Scope scope;
  private final NacosTrace trace;
  private volatile @Nullable Session session;
  /** When the client was last heard from, in the scheduler's nanoseconds. */
  private volatile long lastHeardNanos;
  /** The server asked the client to move (ConnectResetRequest): its end waits for the redo. */
  private volatile boolean moving;

  NacosConnection(String id, StreamWriter<Payload> out, SessionManager sessions,
      NacosConnections connections, Scope scope, long nowNanos, NacosTrace trace) {
    this.lastHeardNanos = nowNanos;
    this.trace = trace;
    this.id = id;
    this.out = out;
    this.sessions = sessions;
    this.connections = connections;
    this.scope = scope;
  }

  String id() {
    return id;
  }

  /** Set once, right after the session is opened with this connection as its outbound. */
  void session(Session s) {
    this.session = s;
  }

  @Nullable Session session() {
    return session;
  }

  /** Something arrived from the client (a unary request or a stream message) at {@code nanos}. */
  void heard(long nanos) {
    lastHeardNanos = nanos;
  }

  @Override
  public long lastHeardNanos() {
    return lastHeardNanos;
  }

  /** The connection was closed (its session ended). */
  @Override
  public boolean isClosed() {
    return session == null;
  }

  /** Asks the client to move: a {@code ConnectResetRequest} naming {@code suggestedServer} (see {@link NacosConnections#nacosServer}). */
  @Override
  public boolean move(String reason, String suggestedServer) {
    String[] server = NacosConnections.nacosServer(suggestedServer);
    reset(connections.nextResetId(), server[0], server[1]);
    return true;
  }

  /**
   * Asks the client to move: {@code ConnectResetRequest} naming {@code serverIp}/{@code
   * serverPort} (both empty: the client's next server). From now on its end keeps its
   * instances for {@link #REDO_WAIT}.
   */
  void reset(String requestId, String serverIp, String serverPort) {
    moving = true;
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.put("requestId", requestId);
    if (!serverIp.isEmpty()) {
      fields.put("serverIp", serverIp);
      fields.put("serverPort", serverPort);
    }
    fields.put("connectionId", id);
    write(Envelope.request("ConnectResetRequest", "internal", fields));
  }

  /**
   * Ends the connection from the server's side (its identity left the auth file): the stream
   * completes and the session closes, removing what it registered; the client connects again
   * and its requests are asked for a token anew.
   */
  @Override
  public boolean end(io.roster.server.model.RegistryException why) {
    close("its identity is no longer valid (" + why.getMessage() + ")");
    return true;
  }

  /** {@code ClientDetectionRequest}: the client answers at once if it is alive. */
  @Override
  public void probe(String requestId) {
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.put("requestId", requestId);
    write(Envelope.request("ClientDetectionRequest", "internal", fields));
  }

  /** The stream can take more: the session's queue sends what waits. */
  void onReady() {
    Session s = session;
    if (s != null) {
      s.onReady();
    }
  }

  /** The client's {@code NotifySubscriberResponse} for the push with this request id. */
  void acked(String requestId) {
    trace.push(id, "acked", requestId);
    Session s = session;
    if (s == null) {
      return;
    }
    try {
      s.ack(Long.toHexString(Long.parseLong(requestId.trim())));
    } catch (NumberFormatException e) {
      log.debug("Nacos connection {}: ack with a request id that is no push of ours: {}", id, requestId);
    }
  }

  @Override
  public boolean isReady() {
    return out.isReady();
  }

  @Override
  public int send(PushPayload payload) {
    Payload p = (Payload) payload.encoded(ENCODER);
    write(p);
    if (trace.on()) {
      trace.push(id, "pushed", Long.toString(payload.revision()));
    }
    return p.getSerializedSize();
  }

  /**
   * Writes one message on the stream; a no-op once it ended (or when the call was cancelled
   * under us: its cancel handler ends the connection).
   */
  void write(Payload p) {
    out.write(p);
  }

  /**
   * Ends the connection: its session closes (instances and subscriptions removed, subscribers
   * pushed) and the stream completes if it still can. Idempotent.
   */
  @Override
  public void close(String reason) {
    if (!out.complete() && session == null) {
      return; // closed before
    }
    connections.remove(this);
    Session s = session;
    session = null;
    if (s != null) {
      boolean hold = moving;
      Session.CloseSummary summary = hold ? sessions.closeHoldingEnd(s, REDO_WAIT) : sessions.close(s);
      if (summary != null) {
        sessions.closeConnection(scope);
        if (hold) {
          log.info("Nacos connection closed after it was asked to move: conn={} reason={} instances={} kept for "
              + "its redo ({} s) subscriptions={}", id, reason, summary.instances(), REDO_WAIT.toSeconds(),
              summary.subscriptions());
        } else {
          log.info("Nacos connection closed: conn={} reason={} removed instances={} subscriptions={}", id, reason,
              summary.instances(), summary.subscriptions());
        }
      }
    }
  }

  static Object encodePush(PushPayload p) {
    ObjectNode fields = NacosMapping.JSON.createObjectNode();
    fields.put("requestId", Long.toString(p.revision()));
    fields.set("serviceInfo", NacosMapping.serviceInfo(p.snapshot(), p.clusters()));
    return Envelope.request("NotifySubscriberRequest", "naming", fields);
  }
}
