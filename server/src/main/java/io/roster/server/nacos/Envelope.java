package io.roster.server.nacos;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import io.roster.proto.nacos.Metadata;
import io.roster.proto.nacos.Payload;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Nacos's envelope (proto/src/main/proto/nacos_grpc_service.proto): {@code
 * Payload{metadata{type}, body=Any{value=JSON}}}, and the base fields of its requests and
 * responses. Stateless.
 */
final class Envelope {

  /** The server takes no connections now (Nacos: "Server is starting"); the client tries its next server. */
  static final int INVALID_SERVER_STATUS = 300;
  /** {@code ErrorResponse.errorCode} a client reacts to by reconnecting: the connection is not known. */
  static final int UN_REGISTER = 301;
  /** No handler for the type. */
  static final int NO_HANDLER = 302;
  /** A request whose body cannot be read. */
  static final int BAD_REQUEST = 400;
  static final int NOT_FOUND = 404;
  /** No or bad credentials, or no permission: the official client logs in again on this code. */
  static final int NO_RIGHT = 403;
  /** A limit of the connection, its address or the service. */
  static final int OVER_LIMIT = 429;
  static final int SERVER_ERROR = 500;
  /** Not a naming request (config-center): Roster is a naming registry. */
  static final int NOT_IMPLEMENTED = 501;
  static final int UNAVAILABLE = 503;

  private Envelope() {}

  /** The body's type name ({@code Metadata.type}), empty if none. */
  static String type(Payload p) {
    return p.getMetadata().getType();
  }

  /** The body as JSON; an empty object for an empty body. Throws {@link IllegalArgumentException} if unreadable. */
  static JsonNode body(Payload p) {
    ByteString value = p.getBody().getValue();
    if (value.isEmpty()) {
      return NacosMapping.JSON.createObjectNode();
    }
    try {
      JsonNode json = NacosMapping.JSON.readTree(value.toByteArray());
      if (json == null || !json.isObject()) {
        throw new IllegalArgumentException("body: not a JSON object");
      }
      return json;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalArgumentException("body: not JSON (" + e.getOriginalMessage() + ")", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // reading a byte array does no I/O
    }
  }

  /** A successful response of {@code type} with {@code fields} beside the base ones. */
  static Payload response(String type, ObjectNode fields) {
    ObjectNode body = NacosMapping.JSON.createObjectNode();
    body.put("resultCode", 200);
    body.put("errorCode", 0);
    body.setAll(fields);
    body.put("success", true);
    return payload(type, body);
  }

  /** A successful response of {@code type} with only the base fields. */
  static Payload response(String type) {
    return response(type, NacosMapping.JSON.createObjectNode());
  }

  /** {@code ErrorResponse{resultCode:500, errorCode, message, success:false}}. */
  static Payload error(int errorCode, String message) {
    return failure("ErrorResponse", errorCode, message);
  }

  /** A failed response of {@code type}: {@code {resultCode:500, errorCode, message, success:false}}. */
  static Payload failure(String type, int errorCode, String message) {
    ObjectNode body = NacosMapping.JSON.createObjectNode();
    body.put("resultCode", 500);
    body.put("errorCode", errorCode);
    body.put("message", message);
    body.put("success", false);
    return payload(type, body);
  }

  /** A server→client request of {@code type}: {@code headers:{}} and {@code module} added. */
  static Payload request(String type, String module, ObjectNode fields) {
    ObjectNode body = NacosMapping.JSON.createObjectNode();
    body.putObject("headers");
    body.setAll(fields);
    body.put("module", module);
    return payload(type, body);
  }

  private static Payload payload(String type, ObjectNode body) {
    byte[] json;
    try {
      json = NacosMapping.JSON.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e); // a tree of plain values always serialises
    }
    return Payload.newBuilder()
        .setMetadata(Metadata.newBuilder().setType(type))
        .setBody(Any.newBuilder().setValue(ByteString.copyFrom(json)))
        .build();
  }
}
