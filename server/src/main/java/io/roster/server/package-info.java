/**
 * The Roster server. {@link io.roster.server.RosterServer} wires and runs it, on its own
 * scheduler and the system clock or on ones given from outside (tests on a fake clock); {@link
 * io.roster.server.Main} is the command line. Packages: model (values), registry (truth),
 * push (pipeline), session (connected clients), naming (protocol rules, transport-neutral),
 * rpc (the roster.v1 gRPC adapters), nacos (the Nacos 2.x gRPC adapter and the Nacos v1 HTTP
 * routes), http (the HTTP/1.1 listener), cluster (the Raft log of a cluster member), tls (a
 * throwaway CA and certificates as PEM files), config, time; codec (the log.proto messages of the
 * registry's values), store (the data directory), probe (probes of persistent instances), admin,
 * metrics and dns (more adapters).
 *
 * <p>The layers, kept by {@code LayersTest}, which fails the build on an import that breaks them
 * (decision 90, which tables what each package may use): model and time at the bottom, then
 * registry, push, session, naming, and the adapters (rpc, nacos, http, admin, dns, metrics) on
 * top. cluster, store and probe plug in through {@code registry.Writer}: the core never uses them,
 * they use nothing above the registry but their settings (config, tls), and store is below cluster
 * (codec is theirs to share). probe's ProbePolicy, the value that says where the server may probe,
 * is read by session and naming. Adapters use no other adapter but http, the shared HTTP layer of
 * nacos, admin and metrics. No cycle between packages; this package wires them and none uses it.
 */
@NullMarked
package io.roster.server;

import org.jspecify.annotations.NullMarked;
