#!/usr/bin/env bash
# The DNS port's query rate (docs/benchmarks.md, "The DNS port"): one server started from the
# built jar with --dns-port, ten heartbeat instances of one service registered over the Nacos v1
# HTTP API (and kept alive), then dnsperf (Debian's dnsperf) for 20 s per query kind: A of the
# service, SRV of it (ten records, ten addresses), and names that do not exist. Prints dnsperf's
# summary and the server's CPU for each. Needs curl and dnsperf; ports 19848, 18848, 18600 free.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=server/target/roster-server.jar
OUT=$(mktemp -d)
java $(cat server/jvm.options) -jar "$JAR" --host 127.0.0.1 --port 19848 --http-port 18848 --dns-port 18600 \
  > "$OUT/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
until curl -s -o /dev/null http://127.0.0.1:18848/nacos/v1/ns/operator/metrics; do sleep 0.5; done
register() { for i in $(seq 1 10); do curl -s -o /dev/null -X "$1" "http://127.0.0.1:18848/nacos/v1/ns/instance$2?serviceName=orders&ip=10.0.0.$i&port=8080"; done; }
register POST ""
( while kill -0 $PID 2>/dev/null; do register PUT /beat; sleep 4; done ) &
printf 'orders.roster. A\n' > "$OUT/a.txt"
printf '_grpc._tcp.orders.roster. SRV\n' > "$OUT/srv.txt"
printf 'nothing-%s.roster. A\n' $(seq 1 100) > "$OUT/nx.txt"
dnsperf -s 127.0.0.1 -p 18600 -d "$OUT/a.txt" -l 10 -c 4 -T 2 > /dev/null 2>&1   # warm-up
for kind in a srv nx; do
  cpu0=$(awk '{print $14+$15}' /proc/$PID/stat)
  dnsperf -s 127.0.0.1 -p 18600 -d "$OUT/$kind.txt" -l 20 -c 4 -T 2 > "$OUT/$kind.out" 2>&1
  cpu1=$(awk '{print $14+$15}' /proc/$PID/stat)
  echo "== $kind: server CPU $(( (cpu1 - cpu0) * 10 )) ms in 20 s"
  grep -E "Queries (completed|lost|per second)|Average Latency|Response codes" "$OUT/$kind.out"
done
