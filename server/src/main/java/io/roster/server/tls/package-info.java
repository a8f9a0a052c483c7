/**
 * TLS material, in one place that any listener can take it from. {@link
 * io.roster.server.tls.Pki} creates a throwaway certificate authority, issues certificates from
 * it, and writes and reads them as PEM files, and {@link io.roster.server.tls.ClusterPki} is the
 * {@code pki} command that makes a cluster's (decision 63). {@link
 * io.roster.server.tls.ServerTls} reads the PEM files named by {@code --tls-cert}, {@code
 * --tls-key} and {@code --tls-client-ca}, holds them in grpc-java's reloadable key and trust
 * managers, and hands out what a listener needs: gRPC {@code ServerCredentials} for the client
 * port, an {@code SSLContext} over the same managers for the HTTP port. It re-reads the files
 * while the server runs; connections already open keep the session they negotiated, new
 * handshakes get the new material (decision 64).
 */
@NullMarked
package io.roster.server.tls;

import org.jspecify.annotations.NullMarked;
