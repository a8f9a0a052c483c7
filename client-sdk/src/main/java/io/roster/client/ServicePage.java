package io.roster.client;

import java.util.List;
import java.util.Objects;

/**
 * One page of service names, as returned by {@link RosterClient#getServicesOfServer}.
 *
 * @param total how many services match over all pages
 * @param names the service names on this page, sorted; unmodifiable
 */
public record ServicePage(int total, List<String> names) {

  /**
   * Validates and copies.
   *
   * @param total how many services match over all pages, &ge; 0
   * @param names the service names on this page
   */
  public ServicePage {
    if (total < 0) {
      throw new RosterException(
          RosterException.Code.INVALID_ARGUMENT, "total: " + total + " (expected: >= 0)");
    }
    names = List.copyOf(Objects.requireNonNull(names, "names"));
  }
}
