package io.roster.server.registry;

import io.roster.server.model.InstanceKey;
import io.roster.server.model.ServiceKey;

/**
 * Told when an operator's hold ends because its instance left the registry (deregistered, its
 * owner ended): what a standalone server's durable state must forget. Called under the
 * service's lock: it must only hand the key over. Set with {@link Registry#onHoldEnded}.
 */
@FunctionalInterface
public interface HoldListener {
  void holdEnded(ServiceKey service, InstanceKey key);
}
