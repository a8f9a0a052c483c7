#!/usr/bin/env python3
"""Takes each rule out of the cluster's membership policy in turn and runs its unit tests.

Each mutant below removes or weakens one rule of server/.../cluster/Membership.java (the
decision it comes from is named); the script applies it, runs MembershipTest and
LeaderCutOffTest, and prints which tests failed. A rule whose removal no test notices prints
SURVIVED; a mutant whose text is no longer in the file prints "did not apply" (update it with
the code). The file is restored at the end. Usage, from the repository root, after
`./mvnw -q install -DskipTests -pl proto`: scripts/mutate-membership.py
"""
import re
import subprocess
import sys

FILE = "server/src/main/java/io/roster/server/cluster/Membership.java"

# (rule, decision, text in the file, what replaces it)
M = [
("catch-up gate", "28", "    if (!facts.caughtUp()) {\n      why = CATCHING_UP;\n    } else if", "    if"),
("follower cut off after the limit", "28", "      why = now - leaderSeenNanos > TimeUnit.MILLISECONDS.toNanos(silenceMs)", "      why = false"),
("leader needs a majority", "28", "return heard * 2 <= members ?", "return false ?"),
("writable told once per change", "28", "if (facts.caughtUp() && (before == null) != (why == null)) {", "if (facts.caughtUp()) {"),
("an election (no leader named) cuts a member off only after the limit", "34", "      if (role.leaderSilentMs() >= 0) {", "      if (role.leaderSilentMs() < 0) {\n        leaderSeenNanos = Long.MIN_VALUE / 2;\n      } else {"),
("a leader just elected is not cut off", "55", "    if (role.roleElapsedMs() < silenceMs) {\n      return null;\n    }\n", ""),
("leader records a silent member down", "27", "        effects.recordDown(f.getKey());", ""),
("only a member the log has up is recorded down", "27", "if (m != null && !m.down() && f.getValue() > silenceMs)", "if (m != null && f.getValue() > silenceMs)"),
("owners end only after the grace", "27", "if (now - seen.nanos() >= memberGrace.toNanos())", "if (now - seen.nanos() >= 0)"),
("at most one end per grace", "27", "        staleSeen.put(id, new StaleSeen(seen.sinceIndex(), now)); // at most one proposal per grace\n", ""),
("a member up keeps its incarnation", "27", "String keep = m == null || m.down() ? \"\" : m.incarnation();", "String keep = \"\";"),
("a new leader times the grace afresh", "27", "    } else {\n      staleSeen.clear();\n    }", "    }"),
("a member down in the log records its return", "27", "        effects.recordReturn();", ""),
("no second return while announcing", "27", "me.down() && !facts.announcing() && !leaving", "me.down() && !leaving"),
("a new down starts a new grace", "54", "if (seen == null || seen.sinceIndex() != e.getValue())", "if (seen == null)"),
("balance at most every 2 s", "30", "    if (now - lastBalanceNanos < BALANCE_EVERY.toNanos()) {\n      return;\n    }\n", ""),
("load reported on a ~10 % change", "30", "if (Math.abs(mine - reportedSessions) >= Math.max(2, reportedSessions / 10))", "if (mine != reportedSessions)"),
("shed at most a tenth per round", "30", "Math.max(1, mine / 10)", "mine"),
("shed only over 120 % of the mean", "30", "mine <= mean * 1.2 || ", ""),
("a stopping member does not balance", "33", "if (why == null && !leaving) {\n      balance(facts);", "if (why == null) {\n      balance(facts);"),
("a stopping member does not record its return", "33", "me.down() && !facts.announcing() && !leaving", "me.down() && !facts.announcing()"),
("a stall holds ends for 5 s", "34", "    if (gap > STALL.toNanos()) {\n      holdEndsUntilNanos = now + HOLD_ENDS_AFTER_STALL.toNanos();", "    if (gap > STALL.toNanos()) {"),
("ends held while overdue", "34", "return now - watchedAtNanos > STALL.toNanos() || ", "return "),
("ends held while cut off", "49", " || unwritable != null;\n  }", ";\n  }"),
("ends held 5 s after a cut-off", "49", "        holdEndsUntilNanos = now + HOLD_ENDS_AFTER_STALL.toNanos();\n      }\n      wasCutOff", "      }\n      wasCutOff"),
("lead handed to the most recent follower", "29", "if (f.getValue() < best && f.getValue() <= silenceMs)", "if (next == null && f.getValue() <= silenceMs)"),
("sessions never sent to this member", "29", ".filter(m -> !m.down() && !m.id().equals(memberId) && !m.clientAddress().isEmpty())", ".filter(m -> !m.down() && !m.clientAddress().isEmpty())"),
("sessions sent round robin", "29", "live.get(Math.floorMod(suggestions.getAndIncrement(), live.size()))", "live.get(0)"),
]


def main():
    original = open(FILE).read()
    survived = 0
    print("| decision | rule taken out | tests that failed |")
    print("|---|---|---|")
    try:
        for rule, decision, old, new in M:
            if original.count(old) != 1:
                print(f"| {decision} | {rule} | did not apply |")
                survived += 1
                continue
            open(FILE, "w").write(original.replace(old, new))
            run = subprocess.run(["./mvnw", "-B", "-o", "-q", "-pl", "server", "test",
                                  "-Dtest=MembershipTest,LeaderCutOffTest",
                                  "-Dsurefire.failIfNoSpecifiedTests=false"], capture_output=True, text=True)
            failed = sorted(set(re.findall(r"\[ERROR\]\s+(?:MembershipTest|LeaderCutOffTest)\.(\w+)", run.stdout)))
            if "COMPILATION ERROR" in run.stdout:
                failed = ["(does not compile)"]
            if not failed:
                survived += 1
            print(f"| {decision} | {rule} | {', '.join(failed) or 'SURVIVED'} |", flush=True)
    finally:
        open(FILE, "w").write(original)
    sys.exit(1 if survived else 0)


if __name__ == "__main__":
    main()
