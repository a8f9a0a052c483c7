package io.roster.server.cluster;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** The cluster as this member sees it, for operators (Admin/ListMembers). */
public interface Members {

  /** Null when this member can take writes, else why not. */
  @Nullable String unwritable();

  /** What this member knows of every member, itself included. */
  List<MemberView> members();

  /**
   * Adds and removes members at runtime (docs/cluster.md, "Changing the members"); returns the
   * member ids of the new group. A bad entry throws {@link IllegalArgumentException} naming it.
   */
  List<String> changeMembers(List<String> add, List<String> remove, java.time.Duration timeout)
      throws java.io.IOException;

  /**
   * One member as this member sees it.
   *
   * @param lastContactMs ms since this member last heard from it (0 for itself, -1 unknown)
   * @param lag how many log entries its commit index is behind the highest known (-1 unknown)
   * @param sessions the sessions it last reported to the log
   */
  record MemberView(String id, boolean self, String role, String clientAddress, String incarnation,
      boolean down, long lastContactMs, long lag, int sessions) {}
}
