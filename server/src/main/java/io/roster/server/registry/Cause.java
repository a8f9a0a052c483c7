package io.roster.server.registry;

/**
 * Why instances come and go: what {@link RegistryCounters} counts them as. Passed along with
 * every change to a service, from where the cause is known down to the count.
 */
enum Cause { REQUEST, OWNER_END, RESTORE }
