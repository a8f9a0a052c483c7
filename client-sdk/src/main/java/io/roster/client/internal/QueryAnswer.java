package io.roster.client.internal;

/**
 * A server's answer to a query of one service (a {@code Registry/QueryInstances} call, a poll, or
 * a {@code query} frame). Immutable.
 *
 * @param snapshot the state; when {@code notModified}, only its key, revision and checksum
 * @param notModified the known checksum sent with the query matched: the cached copy is current
 * @param warmUpRemainingMs how much longer the answering server is warming up; 0 when warm
 */
record QueryAnswer(ServiceSnapshot snapshot, boolean notModified, long warmUpRemainingMs) {}
