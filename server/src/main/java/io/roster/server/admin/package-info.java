/**
 * Roster's own admin API on the HTTP port ({@link io.roster.server.admin.RosterAdminApi}):
 * namespaces, members and connections, beside the Nacos-shaped admin API of the {@code nacos}
 * package (docs/admin-api.md). Maps and delegates, as every adapter does.
 */
@NullMarked
package io.roster.server.admin;

import org.jspecify.annotations.NullMarked;
