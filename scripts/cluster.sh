#!/usr/bin/env bash
# Three Roster nodes on 127.0.0.1 without Docker, in the foreground: `make cluster`.
#
#   scripts/cluster.sh JAR [server flag...]     the flags go to every node (CLUSTER_ARGS)
#
# JAVA and JAVA_OPTS come from the environment (the Makefile passes those of `make run`).
# Node N: nodeN in these messages, client port 9848/9858/9868, peer port 9849/9859/9869 (its
# --node-id nodeN matches no --members entry, so each node takes the entry of its --peer-port:
# member ids 127.0.0.1:9849, :9859, :9869, as logs and Admin/ListMembers show them), data in
# target/cluster/nodeN, console output (every log line, and a start-up error) in
# target/cluster/nodeN.log. The peer ports speak mutual TLS: on the first start the jar's pki
# command makes a throwaway CA and a certificate per node in target/cluster/pki (ca.crt, ca.key,
# nodeN.crt, nodeN.key), kept for later starts (delete the folder for new ones);
# CLUSTER_ARGS="--peer-tls off" runs the peer ports in plaintext instead. Ctrl-C or SIGTERM
# stops all three with SIGTERM, so each drains as usual, then SIGKILLs whatever still runs after
# STOP_WAIT seconds (default 30). A node that exits on its own (kill -9 one to try a failover) is
# reported and the others keep running.
set -o pipefail
cd "$(dirname "$0")/.." || exit 1

jar=${1:?usage: scripts/cluster.sh JAR [server flag...]}
shift
java=${JAVA:-java}
read -r -a java_opts <<< "${JAVA_OPTS:-}"
dir=target/cluster
stop_wait=${STOP_WAIT:-30}
ready_wait=${READY_WAIT:-60}
members=127.0.0.1:9849,127.0.0.1:9859,127.0.0.1:9869
pid=()     # pid[n] of node n (1..3)
ended=()   # ended[n]: the exit status once node n has ended and been reported
ticker=    # the foreground loop's `sleep 1`

client_port() { echo $((9838 + 10 * $1)); }

# True while node n runs; reports its exit status once when it has ended.
running() {
  local n=$1
  [ -n "${ended[$n]}" ] && return 1
  kill -0 "${pid[$n]}" 2> /dev/null && return 0
  wait "${pid[$n]}" 2> /dev/null
  ended[$n]=$?
  echo "node$n (pid ${pid[$n]}) exited with status ${ended[$n]}; the end of $dir/node$n.log:" >&2
  tail -n 5 "$dir/node$n.log" | sed 's/^/    /' >&2
  return 1
}

stop_all() {
  trap '' INT TERM
  local n until=$((SECONDS + stop_wait))
  [ -n "$ticker" ] && kill "$ticker" 2> /dev/null
  echo
  echo "Stopping the nodes (SIGTERM)..."
  for n in 1 2 3; do
    [ -z "${ended[$n]}" ] && kill -TERM "${pid[$n]}" 2> /dev/null
  done
  for n in 1 2 3; do
    while [ -z "${ended[$n]}" ] && kill -0 "${pid[$n]}" 2> /dev/null && [ "$SECONDS" -lt "$until" ]; do
      sleep 0.1
    done
    if [ -z "${ended[$n]}" ] && kill -0 "${pid[$n]}" 2> /dev/null; then
      echo "node$n still runs after ${stop_wait}s: SIGKILL"
      kill -KILL "${pid[$n]}" 2> /dev/null
    fi
    wait "${pid[$n]}" 2> /dev/null
  done
  echo "Stopped. Logs: $dir/node1.log $dir/node2.log $dir/node3.log"
  exit 0
}

# On Ctrl-C the terminal sends SIGINT to the nodes too, but background jobs of a script ignore
# it: this trap gives each one SIGTERM instead.
trap stop_all INT TERM

mkdir -p "$dir"
pki=$dir/pki
if ! "$java" -jar "$jar" pki --dir "$pki" \
    --members node1=127.0.0.1:9849,node2=127.0.0.1:9859,node3=127.0.0.1:9869 > "$dir/pki.log" 2>&1; then
  echo "Could not make the peer TLS files in $pki:" >&2
  sed 's/^/    /' "$dir/pki.log" >&2
  exit 1
fi
for n in 1 2 3; do
  port=$(client_port "$n")
  mkdir -p "$dir/node$n"
  "$java" ${java_opts[@]+"${java_opts[@]}"} -jar "$jar" \
    --node-id "node$n" --host 127.0.0.1 --port "$port" --peer-port $((port + 1)) \
    --members "$members" --data-dir "$dir/node$n" \
    --peer-tls-cert "$pki/node$n.crt" --peer-tls-key "$pki/node$n.key" --peer-tls-ca "$pki/ca.crt" "$@" \
    > "$dir/node$n.log" 2>&1 < /dev/null &
  pid[$n]=$!
  echo "node$n: pid ${pid[$n]}, client 127.0.0.1:$port, peer 127.0.0.1:$((port + 1)), log $dir/node$n.log"
done

# Wait for SERVING with the server jar's health probe (a cluster node says SERVING once it has
# joined the group and caught up).
deadline=$((SECONDS + ready_wait))
for n in 1 2 3; do
  port=$(client_port "$n")
  until "$java" -cp "$jar" io.roster.server.HealthProbe "$port" > /dev/null 2>&1; do
    running "$n" || break
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "node$n is not SERVING after ${ready_wait}s; see $dir/node$n.log" >&2
      break
    fi
    sleep 0.2
  done
done

alive=0
for n in 1 2 3; do running "$n" && alive=$((alive + 1)); done
if [ "$alive" -eq 0 ]; then
  echo "No node is running." >&2
  exit 1
fi
echo
echo "Client addresses: 127.0.0.1:9848 (node1), 127.0.0.1:9858 (node2), 127.0.0.1:9868 (node3)"
echo "SDK server list:  127.0.0.1:9848,127.0.0.1:9858,127.0.0.1:9868"
echo "Ctrl-C stops the cluster."

# In the foreground until Ctrl-C or until every node has ended. `wait` on a sleep returns at
# once when a signal arrives, so the trap runs without delay.
while :; do
  alive=0
  for n in 1 2 3; do running "$n" && alive=$((alive + 1)); done
  [ "$alive" -eq 0 ] && break
  sleep 1 &
  ticker=$!
  wait "$ticker"
done
echo "Every node has ended." >&2
exit 1
