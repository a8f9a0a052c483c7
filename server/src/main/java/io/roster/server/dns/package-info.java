/**
 * The DNS port ({@code --dns-port}, docs/dns.md): {@link io.roster.server.dns.DnsServer} serves
 * UDP and TCP with bounded threads; {@link io.roster.server.dns.DnsAnswers} turns the registry's
 * services into A, AAAA and SRV records under {@code roster.} with dnsjava's messages (decision 70).
 */
@NullMarked
package io.roster.server.dns;

import org.jspecify.annotations.NullMarked;
