#!/usr/bin/env python3
"""Diffs the evicted sets of upstream and kdesched for one size of the side-by-side benchmark.

Inputs in RAW (written by bench/run.sh side-by-side):
  sbs-SIZE-IMPL.evicted.txt  pods whose Eviction POST got 200/201 (from the audit log)
  sbs-SIZE-IMPL.log          the process log: the plugin per eviction (upstream --v=1 "Evicted pod"
                             strategy=..., kdesched msg="Evicted pod" plugin=...)
  sbs-SIZE-IMPL.plan.json    `kdesched plan` on the state dump taken just before that run
  sbs-SIZE-IMPL.audit.json   eviction response codes (429 = PDB refused at the API server)
Prints markdown: totals, per-plugin counts, and every pod in one set but not the other with what
each side's log and kdesched's plan say about it.

With WORK (bench/run.sh's scratch, holding pods-sbs-SIZE-IMPL.txt: "ns/name node owner" per pod
before the run) it also checks whether the differences are ties: pods of the same owner evicted by
the same plugin (which replica of a Deployment; which of two pods breaking anti-affinity
together), or, for LowNodeUtilization, the same number of pods from the same source node.

Usage: diff_sets.py RAW SIZE [WORK]
"""
import json
import os
import re
import sys
from collections import Counter

UP_RE = re.compile(r'"Evicted pod" pod="([^"]+)".*?strategy="([^"]*)"')
UP_ERR_RE = re.compile(r'"Error evicting pod".*?pod="([^"]+)"')
KD_RE = re.compile(r'msg="Evicted pod" pod=(\S+) .*?plugin=(\S+)')
KD_REFUSED_RE = re.compile(r'msg="(?:eviction refused|refused[^"]*)" pod=(\S+) .*?plugin=(\S+)')


def read_set(path):
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {l.strip() for l in f if l.strip()}


def plugins_from_log(path, impl):
    out = {}
    if not os.path.exists(path):
        return out
    rx = UP_RE if impl == "upstream" else KD_RE
    with open(path, errors="replace") as f:
        for line in f:
            m = rx.search(line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def plan(path):
    if not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        j = json.load(f)
    return {e["pod"]: e["plugin"] for e in j.get("evictions", [])}, j.get("summary", {})


def main():
    raw, size = sys.argv[1], sys.argv[2]
    p = lambda impl, ext: os.path.join(raw, f"sbs-{size}-{impl}.{ext}")
    U, K = read_set(p("upstream", "evicted.txt")), read_set(p("kdesched", "evicted.txt"))
    up_plugin = plugins_from_log(p("upstream", "log"), "upstream")
    kd_plugin = plugins_from_log(p("kdesched", "log"), "kdesched")
    plan_u, sum_u = plan(p("upstream", "plan.json"))
    plan_k, sum_k = plan(p("kdesched", "plan.json"))
    codes = {}
    for impl in ("upstream", "kdesched"):
        try:
            with open(p(impl, "audit.json")) as f:
                codes[impl] = json.load(f).get("eviction_codes", {})
        except FileNotFoundError:
            codes[impl] = {}
    print(f"# Evicted sets at {size}: upstream {len(U)}, kdesched {len(K)}, both {len(U & K)}, "
          f"only upstream {len(U - K)}, only kdesched {len(K - U)}")
    print()
    print(f"Eviction POST response codes: upstream {codes['upstream']}, kdesched {codes['kdesched']}. "
          f"kdesched plan on the state before each run: {len(plan_u)} (upstream's cluster), {len(plan_k)} (kdesched's cluster); "
          f"plan = kdesched's live set: {set(plan_k) == K}.")
    print()
    print("| plugin | upstream | kdesched | both |")
    print("|---|---:|---:|---:|")
    cu = Counter(up_plugin.get(x, "?") for x in U)
    ck = Counter(kd_plugin.get(x, "?") for x in K)
    cb = Counter(kd_plugin.get(x, up_plugin.get(x, "?")) for x in U & K)
    for plug in sorted(set(cu) | set(ck)):
        print(f"| {plug} | {cu.get(plug, 0)} | {ck.get(plug, 0)} | {cb.get(plug, 0)} |")
    print()

    def rows(title, pods):
        if not pods:
            return
        print(f"## {title} ({len(pods)})")
        print()
        print("| pod | upstream's plugin | kdesched's plugin | in kdesched plan of upstream's state |")
        print("|---|---|---|---|")
        for x in sorted(pods):
            print(f"| {x} | {up_plugin.get(x, '-')} | {kd_plugin.get(x, '-')} | {plan_u.get(x, '-')} |")
        print()

    if len(sys.argv) > 3:
        ties(sys.argv[3], size, U, K, up_plugin, kd_plugin)
    rows("Only upstream evicted", U - K)
    rows("Only kdesched evicted", K - U)


def pods_file(work, size, impl):
    out = {}
    path = os.path.join(work, f"pods-sbs-{size}-{impl}.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    out[parts[0]] = (parts[1], parts[2])
    return out


def ties(work, size, U, K, up_plugin, kd_plugin):
    pu, pk = pods_file(work, size, "upstream"), pods_file(work, size, "kdesched")
    if not pu or not pk:
        return

    def key(pod, plugin, pods):
        node, owner = pods.get(pod, ("?", "?"))
        ns = pod.split("/", 1)[0]
        # LowNodeUtilization picks pods from a source node; the others pick among one owner's pods.
        return (plugin, "node " + node) if plugin == "LowNodeUtilization" else (plugin, f"owner {ns}/{owner}")

    cu = Counter(key(x, up_plugin.get(x, "?"), pu) for x in U - K)
    ck = Counter(key(x, kd_plugin.get(x, "?"), pk) for x in K - U)
    same = {k: min(cu[k], ck[k]) for k in set(cu) | set(ck)}
    tied = sum(same.values())
    print(f"## Ties ({tied} of {len(U - K)} only-upstream / {len(K - U)} only-kdesched pods pair up)")
    print()
    print("A pair = one pod only upstream evicted and one only kdesched evicted with the same plugin and the same "
          "owner (anti-affinity, node affinity, topology spread: which replica) or the same source node "
          "(LowNodeUtilization: which pods of that node). What does not pair up:")
    print()
    rest = [(k, cu[k] - same[k], ck[k] - same[k]) for k in sorted(set(cu) | set(ck)) if cu[k] != ck[k]]
    if not rest:
        print("(nothing: every difference is a tie)")
    else:
        def lnu_owners(S, plugins, pods):
            return {f"owner {x.split('/', 1)[0]}/{pods.get(x, ('?', '?'))[1]}" for x in S if plugins.get(x) == "LowNodeUtilization"}
        lu, lk = lnu_owners(U, up_plugin, pu), lnu_owners(K, kd_plugin, pk)
        print("| plugin | group | only upstream | only kdesched | note |")
        print("|---|---|---:|---:|---|")
        def owner_group(x, pods):
            return f"owner {x.split('/', 1)[0]}/{pods.get(x, ('?', '?'))[1]}"

        for (plugin, group), a, b in rest:
            note = ""
            # A pod both evicted, but by different plugins: this plugin's tie went the other way on
            # one side, whose later plugin then took the replica the first side had picked here.
            crossed = [x for x in U & K if plugin != "LowNodeUtilization" and owner_group(x, pu) == group and
                       ((a > b and kd_plugin.get(x) == plugin and up_plugin.get(x) != plugin) or
                        (b > a and up_plugin.get(x) == plugin and kd_plugin.get(x) != plugin))]
            if crossed:
                x = crossed[0]
                first, later = ("kdesched", "upstream") if a > b else ("upstream", "kdesched")
                other = up_plugin.get(x) if a > b else kd_plugin.get(x)
                note = (f"tie across plugins: {first}'s {plugin} picked {x}, the replica {later} evicted later with {other}; "
                        f"{later}'s {plugin} had picked another replica")
            elif plugin == "RemovePodsViolatingTopologySpreadConstraint":
                # Balance plugins run in policy order: LowNodeUtilization before topology spread, and
                # each sees the other's evictions. A tie in LNU's pick can create a skew (its side
                # then evicts one more here) or remove one (the other side evicts one more here).
                side = [n for n, o in (("upstream", lu), ("kdesched", lk)) if group in o]
                if side:
                    note = (f"cascade of a LowNodeUtilization tie: {' and '.join(side)}'s LowNodeUtilization evicted a pod "
                            "of this owner before topology spread ran")
            elif plugin == "LowNodeUtilization":
                note = "how many pods leave an overutilized node depends on which (equal-priority, different-size) pods are picked"
            print(f"| {plugin} | {group} | {a} | {b} | {note} |")
    print()


if __name__ == "__main__":
    main()
