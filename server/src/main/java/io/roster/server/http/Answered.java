package io.roster.server.http;

import io.roster.server.model.RegistryException;
import org.jspecify.annotations.Nullable;

/**
 * Told of every answer a route gave: the route (the prefix it was added with), the request's
 * path, the status, the registry's refusal when the answer reports one, and the nanoseconds from
 * the request's first byte to its answer. Runs on the worker thread; must not block.
 */
@FunctionalInterface
public interface Answered {
  void answered(String route, String path, int status, @Nullable RegistryException refusal,
      long nanos);
}
