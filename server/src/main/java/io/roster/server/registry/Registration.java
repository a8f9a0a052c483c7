package io.roster.server.registry;

import io.roster.server.model.Instance;
import io.roster.server.model.Owner;
import io.roster.server.model.WireSize;

/**
 * One instance as a service holds it: an immutable value, replaced under the service's lock.
 *
 * @param size the instance's wire bytes in a list ({@link WireSize#ofInstanceInList})
 * @param held an operator holds it out of traffic: whoever registers it again, it is stored disabled
 */
record Registration(Owner owner, Instance instance, int size, Claim claim, boolean held) {}
