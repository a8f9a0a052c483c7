/**
 * Immutable values of the registry ({@link io.roster.server.model.ServiceKey},
 * {@link io.roster.server.model.Instance}, {@link io.roster.server.model.ServiceSnapshot}), who owns a
 * registration ({@link io.roster.server.model.Owner})
 * and the validation of names and limits ({@link io.roster.server.model.Names}). Depends on
 * nothing; every value is valid once constructed.
 */
@NullMarked
package io.roster.server.model;

import org.jspecify.annotations.NullMarked;
