/**
 * The DNS port ({@code --dns-port}, docs/dns.md): {@link io.roster.server.dns.DnsServer} serves
 * UDP on one thread, with a rate limit per source prefix ({@code RateLimit}), and TCP on one
 * selector thread with bounded connections ({@code DnsTcp}); {@link io.roster.server.dns.DnsAnswers}
 * turns the registry's services into A, AAAA and SRV records under {@code roster.} with dnsjava's
 * messages, names matched in any case ({@code FoldedNames}) (decisions 70 and 95).
 */
@NullMarked
package io.roster.server.dns;

import org.jspecify.annotations.NullMarked;
