package io.roster.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.jspecify.annotations.Nullable;

/**
 * The answers of the admin APIs, in Nacos 3's envelope: {@code {"code":0,"message":"success",
 * "data":...}}, and a refusal as {@code {"code":STATUS,"message":WHY,"data":null}} with that HTTP
 * status; pages as Nacos's {@code Page} (docs/admin-api.md).
 */
public final class JsonEnvelope {

  /** The JSON trees of the admin APIs. */
  public static final ObjectMapper JSON = new ObjectMapper();

  private JsonEnvelope() {}

  /** A 200 carrying {@code data}. */
  public static HttpResponse ok(JsonNode data) {
    return of(200, 0, "success", data);
  }

  /** A refusal: the status, and the envelope naming it and why. */
  public static HttpResponse error(HttpException e) {
    return of(e.status(), e.status(), e.getMessage(), null);
  }

  /** Nacos's {@code Page}: totalCount, pageNumber, pagesAvailable, pageItems. */
  public static ObjectNode page(int total, int pageNo, int pageSize, ArrayNode items) {
    ObjectNode o = JSON.createObjectNode();
    o.put("totalCount", total);
    o.put("pageNumber", pageNo);
    o.put("pagesAvailable", (total + pageSize - 1) / pageSize);
    o.set("pageItems", items);
    return o;
  }

  /** A text node, for answers whose data is a word ({@code "ok"}). */
  public static JsonNode text(String s) {
    return JSON.getNodeFactory().textNode(s);
  }

  private static HttpResponse of(int status, int code, String message, @Nullable JsonNode data) {
    ObjectNode o = JSON.createObjectNode();
    o.put("code", code);
    o.put("message", message);
    o.set("data", data);
    try {
      return HttpResponse.json(status, JSON.writeValueAsString(o));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e); // a tree of plain values always serialises
    }
  }
}
