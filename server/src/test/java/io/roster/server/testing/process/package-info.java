/**
 * Real server processes from the built jar, shared by the integration tests and the bench
 * (through the server's test jar; nothing here needs a test library). {@link
 * io.roster.server.testing.process.ServerLauncher} says how servers start (JVM flags, log
 * directory, timeouts); {@link io.roster.server.testing.process.ServerProcess} is one server on a
 * loopback address (SERVING, SIGTERM, kill -9, SIGSTOP/SIGCONT, its output); {@link
 * io.roster.server.testing.process.LocalCluster} is N of them on 127.0.0.1.. forming one
 * cluster, with peer links that can be cut, restarts and the members' views; {@link
 * io.roster.server.testing.process.JavaProcess} is any child JVM with its output in a file,
 * killed when the JVM that started it exits; {@link io.roster.server.testing.process.Ports}
 * finds free ports.
 */
package io.roster.server.testing.process;
