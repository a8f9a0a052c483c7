#!/usr/bin/env python3
"""CPU per thread group of every running Roster server, until interrupted.

    scripts/thread-cpu.py [SECONDS]

Every 2 s it reads /proc/PID/task/*/stat of each `roster-server.jar` process and keeps the CPU
each thread has used (user + system). Threads are grouped by name with digits folded ("C2
CompilerThread0" and "C1 CompilerThread1" -> "C# CompilerThread#", Ratis's "127.0.0.1_9849-..."
threads -> "#.#.#.#_#"). After SECONDS (default: until Ctrl-C) it prints, per server, the
groups by CPU used while it watched. Run it next to a bench workload, e.g. W12, to see how much
of a member's CPU is the JIT, the GC, Roster's gRPC event loops or Ratis (docs/benchmarks.md).
"""
import collections
import os
import re
import sys
import time


def servers():
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "roster-server.jar" in cmd and "java" in cmd.split(" ")[0]:
            node = re.search(r"--node-id (\S+)", cmd)
            found[pid] = node.group(1) if node else "pid " + pid
    return found


def sample(pid):
    """Clock ticks used per thread group of one process (empty if it has ended)."""
    ticks = collections.Counter()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2:].split()
            ticks[re.sub(r"\d+", "#", name)] += int(fields[11]) + int(fields[12])
    except OSError:
        pass
    return ticks


def main():
    limit = float(sys.argv[1]) if len(sys.argv) > 1 else None
    hz = os.sysconf("SC_CLK_TCK")
    first, last, names = {}, {}, {}
    start = time.monotonic()
    try:
        while limit is None or time.monotonic() - start < limit:
            for pid, name in servers().items():
                s = sample(pid)
                if s:
                    first.setdefault(pid, s)
                    last[pid] = s
                    names[pid] = name
            time.sleep(2)
    except KeyboardInterrupt:
        pass
    for pid, end in last.items():
        used = end - first[pid]  # threads that ended meanwhile are not counted
        total = sum(used.values())
        print(f"== {names[pid]} (pid {pid}): {total / hz:.1f} s of CPU while watched")
        for group, t in used.most_common(15):
            if t:
                print(f"  {group:24s} {t / hz:7.1f} s {100 * t / max(total, 1):5.1f} %")


if __name__ == "__main__":
    main()
