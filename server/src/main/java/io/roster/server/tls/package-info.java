/**
 * TLS material: {@link io.roster.server.tls.Pki} creates a throwaway certificate authority, issues
 * certificates from it, and writes and reads them as PEM files; {@link
 * io.roster.server.tls.ClusterPki} is the {@code pki} command that makes a cluster's (decision 63).
 */
@NullMarked
package io.roster.server.tls;

import org.jspecify.annotations.NullMarked;
