package io.roster.client;

/**
 * Receives the instance list of a subscribed service whenever its visible content changes.
 *
 * <p>Threading: a listener runs on the client's listener executor (see
 * {@link RosterClient.Builder#listenerExecutor}), never inside the client's own work, so it may
 * call the client (a blocking call included). Events of
 * one service reach the listeners of that service one at a time and in order; events of
 * different services may run concurrently. A listener that throws is logged and affects no
 * other listener and no other service. A slow listener delays only later events of its own
 * service.
 */
@FunctionalInterface
public interface Listener {

  /**
   * Called with the complete new instance list of the service and its difference to the
   * previous one. The first event of a subscription (or of a listener added to a service that
   * is already subscribed) carries the whole list in {@link InstancesChangeEvent#added()}.
   *
   * @param event the new state; never null
   */
  void onEvent(InstancesChangeEvent event);
}
