/**
 * Who a caller is and what it may do, the same for every port and protocol: the auth file
 * ({@link io.roster.server.auth.AuthFile}: users with PBKDF2 password hashes, static tokens, client
 * certificates by their SAN, grants per namespace), the access tokens a login issues ({@link
 * io.roster.server.auth.AccessTokens}), the names a verified client certificate is known by ({@link
 * io.roster.server.auth.ClientCertificates}), and the one check every adapter calls ({@link
 * io.roster.server.auth.Authenticator}): a credential, or the client certificate the adapter's TLS
 * session verified, becomes a {@link io.roster.server.auth.Principal}, whose grants allow or refuse
 * a {@link io.roster.server.auth.Permission} on a namespace and service. Guessing is slowed there
 * too, for every port alike: failed logins per host and username ({@code Guesses}), passwords
 * checked on a thread of their own ({@code PasswordChecks}), tokens never refused unchecked, and
 * credentials that left the auth file refused as revoked. The audit trail ({@link
 * io.roster.server.auth.Audit}) records logins, refusals and operator actions. Plain Java: no gRPC,
 * no HTTP. docs/security.md describes the model; decisions 65, 79, 80 and 83 record it.
 *
 * <p>May depend on {@code model} and {@code time}, never on an adapter.
 */
@NullMarked
package io.roster.server.auth;

import org.jspecify.annotations.NullMarked;
