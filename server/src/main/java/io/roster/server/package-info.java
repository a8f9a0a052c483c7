/**
 * The Roster server. {@link io.roster.server.RosterServer} wires and runs it, on its own
 * scheduler and the system clock or on ones given from outside (tests on a fake clock); {@link
 * io.roster.server.Main} is the command line. Packages: model (values), registry (truth),
 * push (pipeline), session (connected clients), naming (protocol rules, transport-neutral),
 * rpc (the roster.v1 gRPC adapters), nacos (the Nacos 2.x gRPC adapter and the Nacos v1 HTTP
 * routes), http (the HTTP/1.1 listener), cluster (the Raft log of a cluster member), tls (a
 * throwaway CA and certificates as PEM files), config, time.
 */
@NullMarked
package io.roster.server;

import org.jspecify.annotations.NullMarked;
