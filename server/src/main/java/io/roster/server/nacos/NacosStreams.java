package io.roster.server.nacos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.roster.proto.nacos.Payload;
import io.roster.server.auth.Principal;
import io.roster.server.model.Owner;
import io.roster.server.model.RegistryException;
import io.roster.server.naming.Hellos;
import io.roster.server.session.RequestCounters;
import io.roster.server.session.Scope;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import io.roster.server.stream.StreamWriter;
import java.net.SocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /BiRequestStream/requestBiStream}: a Nacos connection's stream. Its {@code
 * ConnectionSetupRequest} opens the connection's {@link Session} (owner kind NACOS) and registers
 * the {@link NacosConnection} that carries its pushes; afterwards the client's {@code
 * NotifySubscriberResponse}s ack them, and its answers to the server's requests ({@code
 * ClientDetectionResponse}, {@code ConnectResetResponse}) count as heard. The unary requests are
 * {@link NacosService}'s.
 *
 * <p>Thread-safe: one instance serves every stream; a stream's messages arrive one at a time
 * on the transport's thread, and everything written goes through the stream's {@link StreamWriter}.
 */
final class NacosStreams {

  /** Logged under the service's name, as the stream's lines always were. */
  private static final Logger log = LoggerFactory.getLogger(NacosService.class);

  /** How a {@code ConnectionSetupRequest} names the fields of a hello, in its errors. */
  private static final Hellos.Fields SETUP_FIELDS =
      new Hellos.Fields("connectionId", "tenant", "labels.AppName", "clientVersion", "labels");

  /** What {@code SetupAckRequest} tells the client: the last step of a Nacos connection's setup. */
  private static final String SUPPORT_PERSISTENT_BY_GRPC = "supportPersistentInstanceByGrpc";

  /** A connection's identity before its first request proves one (auth on): allowed nothing. */
  private static final Principal UNPROVEN = new Principal("", List.of(), Long.MAX_VALUE);

  private final SessionManager sessions;
  private final NacosConnections connections;
  private final ClientDetection detection;
  private final Hellos hellos;
  private final NacosTrace trace;

  NacosStreams(SessionManager sessions, NacosConnections connections, ClientDetection detection, NacosTrace trace) {
    this.sessions = sessions;
    this.trace = trace;
    this.connections = connections;
    this.detection = detection;
    this.hellos = new Hellos(sessions);
  }

  /** The connection's stream: {@code ConnectionSetupRequest} registers it; responses ack pushes. */
  StreamObserver<Payload> open(StreamObserver<Payload> responses) {
    ServerCallStreamObserver<Payload> out = (ServerCallStreamObserver<Payload>) responses;
    String id = NacosConnections.currentId();
    SocketAddress remote = NacosConnections.currentRemote();
    Stream stream = new Stream(id, remote, new StreamWriter<>(out));
    out.setOnReadyHandler(stream::onReady);
    out.setOnCancelHandler(() -> stream.end("cancelled"));
    return stream;
  }

  /** One stream: before setup it has no connection; after, it carries the connection's traffic. */
  private final class Stream implements StreamObserver<Payload> {
    private final String id;
    private final SocketAddress remote;
    private final StreamWriter<Payload> writer;
    private volatile @Nullable NacosConnection connection;

    Stream(String id, SocketAddress remote, StreamWriter<Payload> writer) {
      this.id = id;
      this.remote = remote;
      this.writer = writer;
    }

    @Override
    public void onNext(Payload p) {
      String type = Envelope.type(p);
      NacosConnection heard = connection;
      if (heard != null) {
        heard.heard(detection.now());
      }
      try {
        if (type.equals("ConnectionSetupRequest")) {
          trace.step(id, "received", type);
          setup(p);
          trace.step(id, "answered", type);
        } else if (type.equals("NotifySubscriberResponse")) {
          NacosConnection c = connection;
          if (c != null) {
            c.acked(NacosMapping.text(Envelope.body(p), "requestId"));
          }
        } else if (type.equals("ClientDetectionResponse") || type.equals("ConnectResetResponse")) {
          // Heard (above): that is all a detection's answer is for; a reset's answer says nothing more.
        } else {
          // Other responses (none are asked for yet) and requests are not expected here.
          log.debug("Nacos connection {}: ignored {} on the stream", id, type);
        }
      } catch (RuntimeException e) {
        if (connection == null) {
          // A setup that cannot be read or is refused: the client sees why and tries again.
          String why = e instanceof RegistryException || e instanceof IllegalArgumentException
              ? e.getMessage() : e.toString();
          log.info("Nacos connection {}: {} refused: {}", id, type, why);
          end("bad setup");
          writer.fail(io.grpc.Status.INVALID_ARGUMENT.withDescription(type + ": " + why));
        } else {
          log.debug("Nacos connection {}: bad {} on the stream: {}", id, type, e.toString());
        }
      }
    }

    private void setup(Payload p) {
      if (connection != null) {
        return; // one setup per stream
      }
      if (id == null) {
        end("no transport id");
        return;
      }
      String refused = connections.refusal();
      if (refused != null) {
        writer.fail(io.grpc.Status.UNAVAILABLE.withDescription(refused + ": no new connections here"));
        return;
      }
      JsonNode body = Envelope.body(p);
      Map<String, String> labels = new HashMap<>();
      body.path("labels").properties().forEach(e -> labels.put(e.getKey(), e.getValue().asText()));
      String clientIp = p.getMetadata().getClientIp();
      // The checks every protocol's hello gets (INVALID_ARGUMENT, before anything is opened).
      Hellos.Hello hello = hellos.check(new Hellos.Hello(id, NacosMapping.text(body, "tenant"),
          labels.getOrDefault("AppName", clientIp.isEmpty() ? "nacos" : clientIp),
          NacosMapping.text(body, "clientVersion"), labels, false), SETUP_FIELDS);
      String host = NacosConnections.host(remote);
      Scope scope = sessions.openConnection(host);
      NacosConnection c = new NacosConnection(id, writer, sessions, connections, scope, detection.now(), trace);
      Session session;
      try {
        session = hellos.open(hello, id, Owner.Kind.NACOS, c, scope,
            remote == null ? "" : remote.toString().replaceFirst("^[^/]*/", ""));
      } catch (RuntimeException e) {
        sessions.closeConnection(scope);
        sessions.requests().count(RequestCounters.Protocol.NACOS_GRPC, "ConnectionSetupRequest", e);
        log.info("Nacos connection {} from {} refused: {}", id, host, e.getMessage());
        writer.fail(io.grpc.Status.RESOURCE_EXHAUSTED.withDescription(e.getMessage()));
        return;
      }
      if (sessions.authenticator().enabled()) {
        session.principal(UNPROVEN); // each request proves who it is (identify)
      }
      c.session(session);
      connection = c;
      if (!connections.register(c)) {
        c.close("a second ConnectionSetupRequest on one transport");
        return;
      }
      detection.watch(c);
      log.info("Nacos connection opened: conn={} app={} version={} remote={} connections={}", id,
          session.info().clientName(), session.info().clientVersion(), session.info().remoteAddress(),
          connections.count());
      if (body.has("abilityTable") && !body.get("abilityTable").isNull()) {
        ObjectNode fields = NacosMapping.JSON.createObjectNode();
        fields.putObject("abilityTable").put(SUPPORT_PERSISTENT_BY_GRPC, true);
        c.write(Envelope.request("SetupAckRequest", "internal", fields));
      }
    }

    void onReady() {
      NacosConnection c = connection;
      if (c != null) {
        c.onReady();
      }
    }

    void end(String reason) {
      NacosConnection c = connection;
      if (c != null) {
        c.close(reason);
      }
    }

    @Override
    public void onError(Throwable t) {
      end("stream error");
    }

    @Override
    public void onCompleted() {
      end("stream completed");
    }
  }
}
