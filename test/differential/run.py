#!/usr/bin/env python3
"""Differential tester: kdesched's decisions against upstream descheduler v0.36's real plugin code.

For each seed: generate a cluster and a policy for the plugin (gen.py, policies.py), run the
harness (upstream, several runs: its pod order is random) and `kdesched plan -o json`, and
compare the evicted sets (pod and plugin). EQUAL when kdesched's set is one of upstream's
outcomes; otherwise a DIFFERENCE, which is minimized (minimize.py), written to the output folder
and classified (classify.py): a named, known difference, or unexplained (a failure).

  run.py --kdesched build/kdesched --plugin RemovePodsViolatingNodeAffinity --seeds 500
  run.py --kdesched build/kdesched --plugin existing --seeds 100 --switches
  run.py --kdesched build/kdesched --replay test/differential/cases
"""

import argparse
import collections
import json
import os
import sys
import time

import yaml

import classify
import gen
import minimize
import policies
import sides

STATUSES = ("EQUAL", "DIFFERENCE", "NOT_IMPLEMENTED", "BOTH_REJECT", "REJECTED_BY_KDESCHED",
            "REJECTED_BY_UPSTREAM", "ERROR")


def plugin_list(arg):
    """A comma list of plugin names and groups: existing (every plugin kdesched implements),
    upcoming, all (both), Mixed (every implemented plugin in one policy)."""
    groups = {"existing": list(policies.EXISTING), "upcoming": list(policies.UPCOMING),
              "all": list(policies.EXISTING) + list(policies.UPCOMING), gen.MIXED: [gen.MIXED]}
    out = []
    for p in arg.split(","):
        if p in groups:
            out += groups[p]
        elif p in policies.PLUGINS:
            out.append(p)
        else:
            sys.exit(f"run.py: unknown plugin {p!r}; one of {', '.join(policies.PLUGINS)}, "
                     f"{', '.join(groups)}")
    return list(dict.fromkeys(out))


def make_case(seed, plugin):
    snapshot, features = gen.generate_cluster(seed, plugin)
    policy, variant = policies.generate_policy(seed, plugin, snapshot)
    return {"snapshot": snapshot, "policy": policy}, {"seed": seed, "plugin": plugin, "features": features,
                                                      "variant": variant}


def kind_of(name):
    """documented / undocumented for a known difference, upstream-random for upstream's own ties,
    FAILURE for anything else."""
    if name == classify.RANDOM_TIE:
        return "upstream-random"
    return classify.kind_of_name(name) or "FAILURE"


def write_case(folder, case, result, meta):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "snapshot.json"), "w") as f:
        json.dump(case["snapshot"], f, indent=1, sort_keys=True)
    with open(os.path.join(folder, "policy.yaml"), "w") as f:
        yaml.safe_dump(case["policy"], f, sort_keys=False)
    outcome = {
        "meta": meta,
        "status": result["status"],
        "kdesched": sorted(map(list, sides.evset(result["kdesched"]["evictions"]))),
        "kdeschedError": result["kdesched"]["error"],
        "upstream": [{"count": o["count"], "evictions": sorted(map(list, sides.evset(o["evictions"]))),
                      **({"error": o["error"]} if o.get("error") else {})}
                     for o in result["upstream"].get("outcomes", [])],
        "upstreamError": result["upstream"].get("error"),
        "closest": result.get("closest"),
    }
    with open(os.path.join(folder, "outcome.json"), "w") as f:
        json.dump(outcome, f, indent=1)


class Driver:
    def __init__(self, args):
        self.args = args
        self.up = sides.Upstream(args.harness)
        compat = "upstream" if args.compat == "upstream" else None
        self.ev = sides.Evaluator(self.up, args.kdesched, runs=args.runs, more_runs=args.more_runs, compat=compat)
        # Minimization tries hundreds of candidates: fewer upstream runs each; the result is
        # confirmed with --confirm-runs afterwards.
        self.light = sides.Evaluator(self.up, args.kdesched, runs=max(2, args.runs // 2),
                                     more_runs=max(4, args.more_runs // 4), compat=compat)
        self.classifier = classify.Classifier(self.ev, try_switches=args.switches)
        self.counts = collections.defaultdict(collections.Counter)
        self.variants = collections.defaultdict(collections.Counter)
        self.groups = collections.defaultdict(list)
        self.unexplained = []
        self.errors = []

    def run_seed(self, seed, plugin):
        case, meta = make_case(seed, plugin)
        res = self.ev.evaluate(case)
        st = res["status"]
        self.counts[plugin][st] += 1
        if res["kdesched"]["evictions"] or any(o["evictions"] for o in res["upstream"].get("outcomes", [])):
            self.counts[plugin]["active"] += 1
        self.variants[(plugin, meta["variant"])][st] += 1
        if st in ("EQUAL", "NOT_IMPLEMENTED", "BOTH_REJECT"):
            return st
        folder = os.path.join(self.args.out, plugin, f"seed-{seed}")
        if st != "DIFFERENCE":
            self.errors.append((plugin, seed, st, res["kdesched"]["error"] or res["upstream"].get("error")))
            write_case(folder, case, res, meta)
            return st
        verdict = self.verdict(case, res, plugin)
        small, final = case, res
        if self.args.minimize and (verdict["by"] not in ("switch", "outcomes") or self.args.minimize_explained):
            # A difference a single switch (or upstream's randomness) explains on the whole case
            # needs no minimizing; one that nothing explains may be two causes at once, which the
            # small case separates (and predicates are only trusted on a small case).
            m = minimize.Minimizer(self.light, budget_seconds=self.args.budget)
            small = m.minimize(case, res["closest"])
            meta["minimizeTests"] = m.tests
            final = self.ev.evaluate(small, runs=self.args.confirm_runs)
            if final["status"] == "DIFFERENCE":
                verdict = self.verdict(small, final, plugin)
            else:
                final, small = res, case
        meta["classification"] = verdict
        write_case(folder, small, final, meta)
        key = verdict["name"] or "UNEXPLAINED"
        self.groups[(plugin, key)].append(seed)
        if not verdict["name"]:
            self.unexplained.append((plugin, seed, folder))
        return f"{st} -> {key}"

    def verdict(self, case, res, plugin):
        if self.args.compat:
            # With every switch at upstream only upstream's own random ties may remain.
            tie = classify.upstream_random_tie(res, case)
            return {"name": classify.RANDOM_TIE if tie else None, "by": "outcomes" if tie else None}
        return self.classifier.classify(case, res, plugin)

    def report(self, elapsed):
        lines = ["", f"Differential run: {elapsed:.0f}s, upstream harness calls {self.up.calls}", ""]
        lines.append(f"{'plugin':46} {'cases':>6} {'active':>6} {'equal':>6} {'diff':>5} {'rate':>6}  other")
        summary = {"plugins": {}, "groups": {}, "unexplained": [], "errors": []}
        for plugin, c in self.counts.items():
            total = sum(v for k, v in c.items() if k != "active")
            compared = total - c["NOT_IMPLEMENTED"] - c["BOTH_REJECT"]
            rate = 100.0 * c["DIFFERENCE"] / compared if compared else 0.0
            other = ", ".join(f"{k} {v}" for k, v in c.items() if k not in ("EQUAL", "DIFFERENCE", "active") and v)
            lines.append(f"{plugin:46} {total:6} {c['active']:6} {c['EQUAL']:6} {c['DIFFERENCE']:5} {rate:5.1f}%  {other}")
            summary["plugins"][plugin] = dict(c, cases=total, rate=round(rate, 2))
        lines.append("(active: cases where either side evicted a pod; rate: differences / cases both sides ran)")
        if len(self.variants) > len(self.counts):
            lines.append("")
            for (plugin, variant), c in sorted(self.variants.items()):
                total = sum(c.values())
                lines.append(f"  {plugin} [{variant}]: {c['DIFFERENCE']}/{total} differ")
        lines.append("")
        lines.append("Differences by cause:")
        for (plugin, name), seeds in sorted(self.groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
            tag = kind_of(name)
            lines.append(f"  {plugin} {name} [{tag}]: {len(seeds)} (seeds {', '.join(map(str, seeds[:8]))}{' ...' if len(seeds) > 8 else ''})")
            summary["groups"][f"{plugin}/{name}"] = {"kind": tag, "seeds": seeds}
        for plugin, seed, st, err in self.errors:
            lines.append(f"  {plugin} seed {seed}: {st}: {(err or '')[:200]}")
            summary["errors"].append({"plugin": plugin, "seed": seed, "status": st, "error": err})
        for plugin, seed, folder in self.unexplained:
            summary["unexplained"].append({"plugin": plugin, "seed": seed, "case": folder})
        if self.args.switches:
            sup = self.classifier.switches_supported
            lines.append("")
            lines.append("Compat switches: " + ("not implemented by this kdesched; classified by predicates" if sup is False
                                                else "not probed (no difference)" if sup is None else "used"))
            if self.classifier.missing_switches:
                lines.append("  known differences without a switch: " + ", ".join(sorted(self.classifier.missing_switches)))
        lines.append("")
        ties = sum(len(v) for (_, name), v in self.groups.items() if name == classify.RANDOM_TIE)
        lines.append(f"Unexplained differences: {len(self.unexplained)}; errors: {len(self.errors)}; "
                     f"upstream random ties: {ties}" + (" (compat: upstream)" if self.args.compat else ""))
        text = "\n".join(lines)
        print(text)
        os.makedirs(self.args.out, exist_ok=True)
        with open(os.path.join(self.args.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        with open(os.path.join(self.args.out, "summary.txt"), "w") as f:
            f.write(text + "\n")


def replay(args, driver):
    """Evaluates saved cases: every folder under --replay holding snapshot.json and policy.yaml.
    outcome.json's "expect" says what should happen: "EQUAL" (a fixed bug stays fixed) or the
    name of the known difference that explains the case. Exit 1 when a case does otherwise."""
    bad = 0
    folders = sorted(root for root, _, files in os.walk(args.replay) if "snapshot.json" in files)
    for folder in folders:
        with open(os.path.join(folder, "snapshot.json")) as f:
            snapshot = json.load(f)
        with open(os.path.join(folder, "policy.yaml")) as f:
            policy = yaml.safe_load(f)
        expect = "EQUAL"
        path = os.path.join(folder, "outcome.json")
        if os.path.exists(path):
            with open(path) as f:
                expect = json.load(f).get("expect", "EQUAL")
        case = {"snapshot": snapshot, "policy": policy}
        res = driver.ev.evaluate(case, runs=args.confirm_runs)
        got, note = res["status"], ""
        if got == "DIFFERENCE":
            verdict = driver.classifier.classify(case, res, "")
            got = verdict["name"] or "UNEXPLAINED"
            note = f" (kdesched-only {res['closest']['extra']}, upstream-only {res['closest']['missing']})"
        elif got != "EQUAL":
            note = f" ({(res['kdesched']['error'] or res['upstream'].get('error') or '')[:200]})"
        ok = got == expect
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {os.path.relpath(folder, args.replay)}: {got}"
              f"{'' if ok else f' (expected {expect})'}{note}")
    return 1 if bad else 0


def reclassify(args, driver):
    """Classifies the saved differences of an earlier run again (after the table changed),
    re-running kdesched only; upstream's outcomes come from outcome.json."""
    groups = collections.defaultdict(list)
    for plugin in sorted(os.listdir(args.reclassify)):
        pdir = os.path.join(args.reclassify, plugin)
        if not os.path.isdir(pdir):
            continue
        for name in sorted(os.listdir(pdir), key=lambda n: int(n.split("-")[-1]) if n.split("-")[-1].isdigit() else 0):
            folder = os.path.join(pdir, name)
            with open(os.path.join(folder, "outcome.json")) as f:
                outcome = json.load(f)
            if outcome["status"] != "DIFFERENCE":
                continue
            with open(os.path.join(folder, "snapshot.json")) as f:
                snapshot = json.load(f)
            with open(os.path.join(folder, "policy.yaml")) as f:
                policy = yaml.safe_load(f)
            case = {"snapshot": snapshot, "policy": policy}
            kd = driver.ev.kdesched_only(case, None)
            ev = lambda pairs: [{"namespace": a, "name": b, "plugin": c} for a, b, c in pairs]
            result = {"kdesched": kd, "closest": outcome["closest"],
                      "upstream": {"outcomes": [{"count": u["count"], "evictions": ev(u["evictions"])}
                                                for u in outcome["upstream"]]}}
            verdict = driver.classifier.classify(case, result, plugin)
            outcome["meta"]["classification"] = verdict
            with open(os.path.join(folder, "outcome.json"), "w") as f:
                json.dump(outcome, f, indent=1)
            groups[(plugin, verdict["name"] or "UNEXPLAINED")].append(outcome["meta"]["seed"])
    for (plugin, name), seeds in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        print(f"{plugin} {name} [{kind_of(name)}]: {len(seeds)} (seeds {', '.join(map(str, seeds[:10]))}"
              f"{' ...' if len(seeds) > 10 else ''})")
    return 1 if any(name == "UNEXPLAINED" for _, name in groups) else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kdesched", required=True, help="the kdesched binary")
    ap.add_argument("--harness", help="the harness binary (default: build-harness.sh --print-bin)")
    ap.add_argument("--plugin", default="existing", help="a plugin name, a comma list, existing, upcoming or all")
    ap.add_argument("--seeds", type=int, default=50)
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--seed-list", help="comma-separated seeds instead of --start/--seeds")
    ap.add_argument("--out", default="/tmp/kdesched-differential")
    ap.add_argument("--runs", type=int, default=8, help="upstream runs per case")
    ap.add_argument("--more-runs", type=int, default=40, help="extra upstream runs before calling a case different")
    ap.add_argument("--confirm-runs", type=int, default=100, help="upstream runs on a minimized case")
    ap.add_argument("--no-minimize", dest="minimize", action="store_false")
    ap.add_argument("--budget", type=float, default=60, help="seconds of minimization per difference")
    ap.add_argument("--minimize-explained", action="store_true",
                    help="minimize every difference, not only those nothing explains on the whole case")
    ap.add_argument("--switches", action="store_true",
                    help="classify by re-running kdesched with kdesched: {compat: {<name>: upstream}} per known difference")
    ap.add_argument("--compat", choices=["upstream"], help="run kdesched with kdesched: {compat: upstream}")
    ap.add_argument("--replay", help="evaluate the saved cases in this folder instead of generating")
    ap.add_argument("--reclassify", help="classify again the differences saved by an earlier run in this folder")
    ap.add_argument("--fail-on-unexplained", action="store_true", help="exit 1 on an unexplained difference or error")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    if not args.harness:
        import subprocess
        here = os.path.dirname(os.path.abspath(__file__))
        args.harness = subprocess.check_output([os.path.join(here, "build-harness.sh"), "--print-bin"], text=True).strip()
    for b in (args.kdesched, args.harness):
        if not os.access(b, os.X_OK):
            sys.exit(f"run.py: not executable: {b} (build-harness.sh builds the harness)")
    driver = Driver(args)
    if args.compat and not classify.switches_supported(driver.ev, make_case(1, policies.EXISTING[0])[0]):
        driver.up.close()
        sys.exit("run.py: this kdesched does not implement `kdesched: {compat: ...}` (it accepts an unknown mode)")
    if args.reclassify:
        rc = reclassify(args, driver)
        driver.up.close()
        return rc
    if args.replay:
        rc = replay(args, driver)
        driver.up.close()
        return rc
    seeds = [int(s) for s in args.seed_list.split(",")] if args.seed_list else range(args.start, args.start + args.seeds)
    t0 = time.monotonic()
    for plugin in plugin_list(args.plugin):
        for seed in seeds:
            st = driver.run_seed(seed, plugin)
            if not args.quiet and st != "EQUAL":
                print(f"{plugin} seed {seed}: {st}", flush=True)
    driver.up.close()
    driver.report(time.monotonic() - t0)
    if args.fail_on_unexplained and (driver.unexplained or driver.errors):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
