package io.roster.server.nacos;

import static io.roster.server.http.NamingParams.renamed;

import io.roster.server.http.Applied;
import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.util.concurrent.CompletableFuture;

/**
 * How the Nacos HTTP APIs ({@link NacosHttpApi}, {@link NacosAdminApi}) answer what they refuse:
 * a method not served, an instance not found, a change not applied in time, and the registry's
 * refusals as HTTP statuses. Stateless.
 */
final class NacosHttpErrors {

  /** How long a request waits for its change to be applied. */

  private NacosHttpErrors() {}

  static HttpResponse only(HttpRequest r, String method, HttpEndpoint.Handler h) {
    if (!r.method().equals(method)) {
      throw notAllowed(r, method);
    }
    return h.handle(r);
  }

  static HttpException notAllowed(HttpRequest r, String allowed) {
    return new HttpException(405, r.method() + " " + r.path() + " is not served (expected: " + allowed + ")");
  }

  static HttpException notFound(ServiceKey service, InstanceKey key) {
    return new HttpException(404, "no instance " + key + " in service " + service.groupedName() + " of namespace "
        + service.namespace());
  }

  /** Waits for a change to be applied here; its refusal becomes the answer. */
  static <T> T await(CompletableFuture<T> applied) {
    return Applied.await(applied, NacosHttpErrors::httpError);
  }


  /** The one place a registry refusal becomes an HTTP status. */
  static HttpException httpError(RegistryException e) {
    RegistryException named = renamed(e, "instance.", "");
    int status = switch (e.kind()) {
      case INVALID_ARGUMENT, FAILED_PRECONDITION -> 400;
      case NOT_FOUND -> 404;
      case RESOURCE_EXHAUSTED -> 429;
      case UNAVAILABLE -> 503;
      case UNAUTHENTICATED, PERMISSION_DENIED -> 403; // what Nacos answers, and what its clients log in again on
    };
    return new HttpException(status, named.getMessage(), e);
  }
}
