/**
 * The cluster: the members form one Raft group (Apache Ratis) whose log carries every change to
 * the registry as a {@link io.roster.server.registry.Command}. Each member applies the committed
 * entries in order with the same registry code and pushes to its own subscribers as it applies;
 * the leader decides, in the log, when a member is down and when the owners it held end
 * (docs/cluster.md; decisions 26 and 27). With {@code rpc} and {@code nacos}, it is one of the
 * server packages that speak protobuf.
 */
package io.roster.server.cluster;
