package io.roster.server.naming;

import io.roster.server.model.Names;
import io.roster.server.model.RegistryException;
import io.roster.server.registry.Registry;

/**
 * Listing services, whatever the protocol: the namespace and group checked, a page number from 1
 * and a page size within the protocol's limit, and one page of the sorted service keys. A page
 * that starts past the end is empty, including one that starts past what an {@code int} can
 * skip. The Roster protocol's {@code ListServices}, the Nacos protocol's
 * {@code ServiceListRequest} and the HTTP API's service list come through here, each with its own
 * defaults and naming the fields in its errors as its wire format does ({@link Fields}).
 */
public final class ServiceLists {

  /** What a protocol calls the fields of a service-list request, for the errors that name them. */
  public record Fields(String namespace, String group, String pageNo, String pageSize) {
    /** The Roster protocol's {@code ListServicesRequest}. */
    public static final Fields ROSTER = new Fields("namespace", "group", "page_no", "page_size");
  }

  private ServiceLists() {}

  /**
   * One page of the services of {@code namespace} in {@code group}, sorted.
   *
   * @param namespace the namespace, already defaulted by the protocol
   * @param group the group; empty means every group of the namespace
   * @param pageNo the page, from 1
   * @param pageSize the page's size, 1..{@code maxPageSize}
   * @throws RegistryException INVALID_ARGUMENT naming the field, the value and the limit
   */
  public static Registry.ServicePage page(Registry registry, Fields fields, String namespace, String group,
      long pageNo, long pageSize, long maxPageSize) {
    Names.checkSimpleName(fields.namespace(), namespace, Names.MAX_NAMESPACE);
    if (!group.isEmpty()) {
      Names.checkSimpleName(fields.group(), group, Names.MAX_GROUP);
    }
    if (pageSize < 1 || pageSize > maxPageSize) {
      throw RegistryException.invalid(fields.pageSize(), pageSize, "1.." + maxPageSize);
    }
    if (pageNo < 1) {
      throw RegistryException.invalid(fields.pageNo(), pageNo, "a page number from 1");
    }
    // Spring Cloud Alibaba asks for page 1 of Integer.MAX_VALUE names: fine. A page that starts
    // past what an int can skip is past the end whatever the registry holds.
    return (pageNo - 1) * pageSize > Integer.MAX_VALUE
        ? registry.listServices(namespace, group, 1, 0)
        : registry.listServices(namespace, group, (int) pageNo, (int) pageSize);
  }
}
