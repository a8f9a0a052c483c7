package io.roster.server.naming;

import io.roster.server.model.RegistryException;
import io.roster.server.session.Session;
import io.roster.server.session.SessionManager;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * Listing a server's sessions, whatever the API: oldest first, those {@code which} selects, a page
 * number from 1 and a page size within the API's limit. A page that starts past the end is empty.
 * The Roster protocol's {@code Admin/ListConnections} and the HTTP admin API come through here,
 * each naming the fields in its errors as its wire format does ({@link Fields}).
 */
public final class ConnectionPages {

  /** What an API calls the paging fields, for the errors that name them. */
  public record Fields(String pageNo, String pageSize) {
    /** The Roster protocol's {@code ListConnectionsRequest}. */
    public static final Fields ROSTER = new Fields("page_no", "page_size");
  }

  /** One page of sessions and how many {@code which} selected in all. */
  public record Page(int total, List<Session> sessions) {}

  private ConnectionPages() {}

  /**
   * One page of the sessions {@code which} selects, oldest first.
   *
   * @param pageNo the page, from 1
   * @param pageSize the page's size, 1..{@code maxPageSize}
   * @throws RegistryException INVALID_ARGUMENT naming the field, the value and the limit
   */
  public static Page page(SessionManager sessions, Fields fields, Predicate<Session> which, long pageNo,
      long pageSize, int maxPageSize) {
    if (pageSize < 1 || pageSize > maxPageSize) {
      throw RegistryException.invalid(fields.pageSize(), pageSize, "1.." + maxPageSize);
    }
    if (pageNo < 1) {
      throw RegistryException.invalid(fields.pageNo(), pageNo, "a page number from 1");
    }
    long skip = (pageNo - 1) * pageSize;
    int total = 0;
    List<Session> page = new ArrayList<>();
    for (Session s : sessions.all()) {
      if (!which.test(s)) {
        continue;
      }
      total++;
      if (total > skip && page.size() < pageSize) {
        page.add(s);
      }
    }
    return new Page(total, page);
  }
}
