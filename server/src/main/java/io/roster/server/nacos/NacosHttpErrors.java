package io.roster.server.nacos;

import static io.roster.server.http.NamingParams.renamed;

import io.roster.server.http.HttpEndpoint;
import io.roster.server.http.HttpException;
import io.roster.server.http.HttpRequest;
import io.roster.server.http.HttpResponse;
import io.roster.server.model.InstanceKey;
import io.roster.server.model.RegistryException;
import io.roster.server.model.ServiceKey;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * How the Nacos HTTP APIs ({@link NacosHttpApi}, {@link NacosAdminApi}) answer what they refuse:
 * a method not served, an instance not found, a change not applied in time, and the registry's
 * refusals as HTTP statuses. Stateless.
 */
final class NacosHttpErrors {

  /** How long a request waits for its change to be applied. */
  static final Duration APPLY_TIMEOUT = Duration.ofSeconds(5);

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
    try {
      return applied.get(APPLY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new HttpException(503, "the change was not applied within " + APPLY_TIMEOUT.toSeconds()
          + " s (a cluster member that cannot reach the log?); try again or another server");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new HttpException(503, "interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      while (cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (cause instanceof RegistryException re) {
        throw httpError(re);
      }
      if (cause instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(cause);
    }
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
