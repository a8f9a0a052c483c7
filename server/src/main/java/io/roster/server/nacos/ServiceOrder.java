package io.roster.server.nacos;

import io.roster.server.http.HttpException;
import io.roster.server.model.ServiceKey;
import io.roster.server.registry.Registry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * The order of the admin API's service list ({@code orderBy}): by group and name, as the
 * registry keeps them, or by a count, the largest first (ties by group and name). A count's order
 * reads every selected service of the namespace to sort them. Immutable; thread-safe.
 */
enum ServiceOrder {
  BY_NAME,
  BY_INSTANCES,
  BY_HEALTHY;

  static final String NAME = "name";

  /** The order an {@code orderBy} parameter names, or 400 naming it and what it takes. */
  static ServiceOrder of(String text) {
    return switch (text) {
      case NAME -> BY_NAME;
      case "ipCount" -> BY_INSTANCES;
      case "healthyInstanceCount" -> BY_HEALTHY;
      default -> throw HttpException.badParameter("orderBy", text, "name, ipCount or healthyInstanceCount");
    };
  }

  Registry.ServicePage page(Registry registry, String namespace, Predicate<ServiceKey> which, int pageNo,
      int pageSize) {
    if (this == BY_NAME) {
      return registry.listServices(namespace, "", which, pageNo, pageSize);
    }
    List<ServiceKey> all = new ArrayList<>(registry.listServices(namespace, "", which, 1, Integer.MAX_VALUE).services());
    ToIntFunction<ServiceKey> of = k -> {
      Registry.ServiceStats stats = registry.stats(k);
      return stats == null ? 0 : this == BY_INSTANCES ? stats.instanceCount() : stats.healthyCount();
    };
    all.sort(Comparator.comparingInt(of).reversed()); // stable: ties keep group and name order
    int from = (int) Math.min(all.size(), (long) (pageNo - 1) * pageSize);
    int to = (int) Math.min(all.size(), (long) from + pageSize);
    return new Registry.ServicePage(all.size(), List.copyOf(all.subList(from, to)));
  }
}
