#!/bin/sh
# The image's entrypoint: the server with the JVM flags it ships with (server/jvm.options, as
# `make run`), the CDS archive when the image has one, JAVA_OPTS for more JVM flags, and every
# argument as a server flag. exec: the JVM is PID 1 and gets SIGTERM from `docker stop`.
set -e
# The jar is named by the same absolute path as in the archive's training run (Dockerfile).
if [ -f /app/roster-server.jsa ]; then
  set -- -XX:SharedArchiveFile=/app/roster-server.jsa -jar /app/roster-server.jar "$@"
else
  set -- -jar /app/roster-server.jar "$@"
fi
# shellcheck disable=SC2046,SC2086 # word splitting of the flag lists is intended
exec java $(cat /app/jvm.options) $JAVA_OPTS "$@"
