#!/usr/bin/env python3
"""What ended the owners behind each flap of a chaos run.

    scripts/flap-causes.py [integration-tests/target]

Reads chaos-flaps.txt and the server logs under process-logs/ in the given target directory
(default integration-tests/target, as `make chaos` leaves it). For every instance a subscriber
lacked, it prints the last session end that removed that client's instances within 30 s before
(with its reason: goodbye, cancelled, silent peer, ...) or a "The log ended N owners of member X"
within 5 s before, and then a count per cause. Instance ports map to client ids (c-<port>).
"""
import collections
import glob
import os
import re
import sys

target = sys.argv[1] if len(sys.argv) > 1 else "integration-tests/target"


def seconds(t):
    h, m, s = t.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


flaps = []
with open(os.path.join(target, "chaos-flaps.txt")) as f:
    for line in f:
        m = re.search(r"\((\d\d:\d\d:\d\d\.\d+)\) lacked \[([^\]]*)\]", line)
        if m:
            flaps.append((m.group(1), [x.split(":")[1] for x in m.group(2).split(", ")]))

closes = collections.defaultdict(list)
ended = []
for path in glob.glob(os.path.join(target, "process-logs", "server-*.log")):
    with open(path, errors="ignore") as f:
        for line in f:
            m = re.match(r"(\d\d:\d\d:\d\d\.\d+) .*Session closed: conn=\S+ client=c-(\d+) reason=(.*) "
                         r"removed instances=(\d+)", line)
            if m and int(m.group(4)) > 0:
                closes[m.group(2)].append((m.group(1), m.group(3), os.path.basename(path)))
            m = re.match(r"(\d\d:\d\d:\d\d\.\d+) .*The log ended (\d+) owners of member (\S+)", line)
            if m:
                ended.append((m.group(1), m.group(3), m.group(2)))

causes = collections.Counter()
seen = set()
for t, ports in flaps:
    for p in ports:
        key = (p, int(seconds(t)) // 20)
        if key in seen:
            continue
        seen.add(key)
        c = [x for x in closes.get(p, []) if 0 <= seconds(t) - seconds(x[0]) <= 30]
        e = [x for x in ended if 0 <= seconds(t) - seconds(x[0]) <= 5]
        if c:
            cause = "session end: " + c[-1][1]
            detail = "%s on %s" % (c[-1][0], c[-1][2])
        elif e:
            cause = "the log ended a member's owners"
            detail = "%s member %s (%s owners)" % e[-1]
        else:
            cause = "unknown"
            detail = ""
        causes[cause] += 1
        print("%s instance port %s: %s %s" % (t, p, cause, detail))
print()
for cause, n in causes.most_common():
    print("%4d  %s" % (n, cause))
