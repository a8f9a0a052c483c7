/**
 * The cluster: the members form one Raft group (Apache Ratis) whose log carries every change to
 * the registry as a {@link io.roster.server.registry.Command}. Each member applies the committed
 * entries in order with the same registry code and pushes to its own subscribers as it applies;
 * the leader decides, in the log, when a member is down and when the owners it held end
 * (docs/cluster.md; decisions 26 and 27).
 *
 * <p>{@link io.roster.server.cluster.ClusterNode} is the adapter to Ratis: it owns the Raft
 * server, the {@link io.roster.server.cluster.LogClient} and the settings, reads the facts of each
 * moment and carries out what the {@link io.roster.server.cluster.Membership} policy decides
 * (who can write, who is down, whose owners end, balance), which knows nothing of Ratis and is
 * tested on a fake clock. {@link io.roster.server.cluster.Proposer} gathers this member's
 * changes into entries; {@link io.roster.server.cluster.RegistryStateMachine} applies them;
 * {@link io.roster.server.cluster.LogCodec} and {@link io.roster.server.cluster.SnapshotCodec}
 * are the durable format (decision 58), over the values of {@link
 * io.roster.server.codec.ValueCodec}, which the standalone store shares (decision 90). {@link io.roster.server.cluster.GroupProbe} asks other
 * members what they know of the group: a member on its first start, whether to form the group or
 * wait to be added; a change of members, whether each member it adds is ready (decision 86). With {@code rpc} and {@code nacos}, it is one of the
 * server packages that speak protobuf.
 */
@NullMarked
package io.roster.server.cluster;

import org.jspecify.annotations.NullMarked;
