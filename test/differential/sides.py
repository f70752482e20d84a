"""The two sides of a comparison: upstream (the Go harness) and kdesched (`kdesched plan`).

A case is a dict {"snapshot": <v1 List>, "policy": <DeschedulerPolicy>}. Both sides read the
same files; kdesched's policy may get an extra top-level `kdesched:` block (compat switches),
which upstream never sees.
"""

import atexit
import copy
import json
import os
import shutil
import subprocess
import tempfile

import yaml

import gen


def evset(evictions):
    """The decision: which pods, by which plugin. Order and reasons are not compared."""
    return frozenset((e["namespace"], e["name"], e.get("plugin", "")) for e in evictions)


class Upstream:
    """One long-lived harness process in --serve mode."""

    def __init__(self, binary):
        self.binary = binary
        self.proc = None
        self.calls = 0

    def _start(self):
        self.proc = subprocess.Popen([self.binary, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def run(self, snapshot_path, policy_path, runs):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        req = {"snapshot": snapshot_path, "policy": policy_path, "runs": runs, "now": gen.NOW}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        self.calls += 1
        if not line:
            self.proc = None
            return {"runs": runs, "outcomes": [], "error": "harness process died"}
        return json.loads(line)

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


def run_kdesched(binary, snapshot_path, policy_path):
    """Returns {"evictions": [...], "refused": [...], "error": str|None, "exit": int}."""
    try:
        p = subprocess.run([binary, "plan", "--snapshot", snapshot_path, "--policy-config-file", policy_path,
                            "-o", "json", "--now", gen.NOW], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return {"evictions": [], "refused": [], "error": "timeout", "exit": -1}
    if p.returncode != 0:
        return {"evictions": [], "refused": [], "error": (p.stderr.strip() or p.stdout.strip())[:2000],
                "exit": p.returncode}
    out = json.loads(p.stdout)
    return {"evictions": out.get("evictions", []), "refused": out.get("refused", []), "error": None, "exit": 0}


def with_compat(policy, compat):
    """The policy with kdesched's compat block: compat is "upstream" or {name: "upstream"}."""
    p = copy.deepcopy(policy)
    if compat:
        p.setdefault("kdesched", {})["compat"] = compat
    return p


class Workdir:
    """Writes a case's files once per evaluation (small, in a private temp dir)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kdesched-diff-")
        self.n = 0
        atexit.register(shutil.rmtree, self.dir, True)

    def write(self, case, kd_policy=None):
        self.n += 1
        base = os.path.join(self.dir, str(self.n % 4))
        snap, up_pol, kd_pol = base + "-snapshot.json", base + "-upstream.yaml", base + "-kdesched.yaml"
        with open(snap, "w") as f:
            json.dump(case["snapshot"], f)
        with open(up_pol, "w") as f:
            yaml.safe_dump(case["policy"], f, sort_keys=False)
        with open(kd_pol, "w") as f:
            yaml.safe_dump(kd_policy if kd_policy is not None else case["policy"], f, sort_keys=False)
        return snap, up_pol, kd_pol


NOT_IMPLEMENTED_MARKERS = ("unknown plugin", "not registered", "is not a known plugin", "not implemented",
                           "not supported yet")


class Evaluator:
    """Runs both sides on a case and classifies the comparison."""

    def __init__(self, upstream, kdesched_bin, runs=8, more_runs=40, compat=None):
        self.up = upstream
        self.kd = kdesched_bin
        self.runs = runs
        self.more_runs = more_runs
        self.compat = compat
        self.work = Workdir()

    def kdesched_only(self, case, compat):
        snap, _, kd_pol = self.work.write(case, with_compat(case["policy"], compat))
        return run_kdesched(self.kd, snap, kd_pol)

    def evaluate(self, case, runs=None, confirm=True):
        """Returns a result dict: status EQUAL | DIFFERENCE | NOT_IMPLEMENTED | BOTH_REJECT |
        REJECTED_BY_KDESCHED | REJECTED_BY_UPSTREAM | ERROR, with both sides' outcomes."""
        snap, up_pol, kd_pol = self.work.write(case, with_compat(case["policy"], self.compat))
        kd = run_kdesched(self.kd, snap, kd_pol)
        up = self.up.run(snap, up_pol, runs or self.runs)
        res = {"kdesched": kd, "upstream": up}
        plugins = [n for p in case["policy"]["profiles"] for ext in p["plugins"].values() for n in ext.get("enabled", [])]
        if kd["error"] and kd["exit"] == 2 and any(m in kd["error"] for m in NOT_IMPLEMENTED_MARKERS) \
                and any(pl in kd["error"] for pl in plugins):
            # Still a check of the generator: upstream must accept what it is given.
            res["status"] = "REJECTED_BY_UPSTREAM" if up.get("error") else "NOT_IMPLEMENTED"
            return res
        if up.get("error") and kd["error"]:
            res["status"] = "BOTH_REJECT"
            return res
        if up.get("error"):
            res["status"] = "REJECTED_BY_UPSTREAM"
            return res
        if kd["error"]:
            res["status"] = "REJECTED_BY_KDESCHED" if kd["exit"] == 2 else "ERROR"
            return res
        if any(o.get("error", "").startswith("panic") for o in up["outcomes"]):
            res["status"] = "ERROR"
            return res
        mine = evset(kd["evictions"])
        if any(evset(o["evictions"]) == mine for o in up["outcomes"]):
            res["status"] = "EQUAL"
            return res
        if confirm and self.more_runs:
            # Upstream's order is random: look harder before calling it a difference.
            more = self.up.run(snap, up_pol, self.more_runs)
            merge_outcomes(up, more)
            if any(evset(o["evictions"]) == mine for o in up["outcomes"]):
                res["status"] = "EQUAL"
                return res
        res["status"] = "DIFFERENCE"
        res["closest"] = closest(mine, up["outcomes"])
        return res


def merge_outcomes(into, more):
    into["runs"] = into.get("runs", 0) + more.get("runs", 0)
    for o in more.get("outcomes", []):
        key = evset(o["evictions"])
        for p in into["outcomes"]:
            if evset(p["evictions"]) == key:
                p["count"] += o["count"]
                break
        else:
            into["outcomes"].append(o)


def closest(mine, outcomes):
    """The upstream outcome nearest to kdesched's, and what differs: pods only kdesched evicts
    (extra) and pods only upstream evicts (missing)."""
    best = None
    for o in outcomes:
        theirs = evset(o["evictions"])
        d = len(mine ^ theirs)
        if best is None or d < best[0]:
            best = (d, theirs)
    theirs = best[1] if best else frozenset()
    return {"extra": sorted(mine - theirs), "missing": sorted(theirs - mine)}
