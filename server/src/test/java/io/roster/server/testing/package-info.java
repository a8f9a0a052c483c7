/**
 * Test fixtures of the server's tests, shared with the SDK's and the integration tests through the
 * server's test jar. Entry point: {@link io.roster.server.testing.LoopbackServer}, a JUnit 5
 * extension that runs a server on a loopback socket for one test and closes the channels and
 * {@link io.roster.server.testing.TestSession}s opened on it; {@link
 * io.roster.server.testing.StreamRecorder} records what a Watch answers; {@link
 * io.roster.server.testing.TcpProxy} freezes a connection; {@link
 * io.roster.server.testing.TestTime} holds the one test time factor. The server jar as real
 * processes (a standalone server, a local cluster) is in {@link io.roster.server.testing.process},
 * which the bench uses too.
 */
package io.roster.server.testing;
