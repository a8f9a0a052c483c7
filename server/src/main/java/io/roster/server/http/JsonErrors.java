package io.roster.server.http;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * Jetty's own answers (a request it cannot parse: 400 for a bad header line or an ambiguous
 * URI, 413, 414 and 431 for what is too large; a failure outside the routes) in the admin API's
 * JSON envelope ({@code {"code":431,"message":"...","data":null}}), with the same headers as
 * every other answer; no stack traces or causes in them. Each is counted in {@link HttpRefusals}.
 */
final class JsonErrors extends ErrorHandler {

  private final HttpRefusals refusals;

  /** Counts each answer in {@code refusals}, by its status. */
  JsonErrors(HttpRefusals refusals) {
    this.refusals = refusals;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    HttpEndpoint.secure(response.getHeaders());
    int status = request.getAttribute(ERROR_STATUS) instanceof Integer code ? code : response.getStatus();
    if (status < 400) {
      status = 500;
    }
    String message = request.getAttribute(ERROR_MESSAGE) instanceof String m && !m.isBlank() ? m
        : HttpStatus.getMessage(status);
    refusals.count(HttpRefusals.Reason.of(status));
    HttpResponse answer = JsonEnvelope.error(new HttpException(status, message));
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
    response.write(true, ByteBuffer.wrap(answer.body().getBytes(StandardCharsets.UTF_8)), callback);
    return true;
  }
}
