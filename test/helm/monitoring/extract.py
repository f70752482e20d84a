#!/usr/bin/env python3
"""Pulls the monitoring objects out of a `helm template` output for promtool (test/helm/run.sh).

  extract.py RENDERED.yaml OUTDIR    writes OUTDIR/alerts.rules.yaml (the PrometheusRule's groups)
                                     and OUTDIR/dashboard.rules.yaml (one recording rule per
                                     dashboard query, Grafana's variables replaced by values
                                     PromQL parses), and prints the number of queries
  extract.py --names OUTDIR ROOT     checks that every metric the rules and queries read is one
                                     kdesched registers (a string literal in ROOT's pkg/ or cmd/
                                     sources), so a renamed metric fails; prints one line per name
"""
import json
import pathlib
import re
import sys

import yaml

# Grafana's built-in range variables -> a PromQL duration. $namespace and $job stay: they only
# appear inside label-matcher strings, which PromQL parses whatever they hold.
GRAFANA_VARS = {"$__rate_interval": "5m", "$__range": "1h", "$__interval": "1m"}
METRIC = re.compile(r"\b((?:descheduler|kdesched|process)_[a-z0-9_]+)\b")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def extract(rendered, outdir):
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    rules = [d for d in docs if d["kind"] == "PrometheusRule"]
    boards = [d for d in docs if d["kind"] == "ConfigMap" and any(k.endswith(".json") for k in d.get("data", {}))]
    assert len(rules) == 1 and len(boards) == 1, f"{len(rules)} PrometheusRule, {len(boards)} dashboard ConfigMaps"
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    yaml.safe_dump({"groups": rules[0]["spec"]["groups"]}, open(out / "alerts.rules.yaml", "w"), sort_keys=False)
    recording = []
    variables = []
    for name, text in boards[0]["data"].items():
        board = json.loads(text)
        variables += [v["definition"] for v in board["templating"]["list"] if v.get("type") == "query"]
        for panel in board["panels"]:
            for target in panel.get("targets", []):
                expr = target["expr"]
                for var, value in GRAFANA_VARS.items():
                    expr = expr.replace(var, value)
                record = f"dashboard:panel_{panel['id']}_{target['refId']}"
                recording.append({"record": record, "expr": expr, "labels": {"panel": panel["title"]}})
    yaml.safe_dump({"groups": [{"name": "dashboard", "rules": recording}]}, open(out / "dashboard.rules.yaml", "w"),
                   sort_keys=False)
    (out / "dashboard.variables.txt").write_text("".join(v + "\n" for v in variables))
    print(len(recording))


def names(outdir, root):
    exprs = []
    for f in ("alerts.rules.yaml", "dashboard.rules.yaml"):
        for g in yaml.safe_load(open(pathlib.Path(outdir) / f))["groups"]:
            exprs += [r["expr"] for r in g["rules"]]
    exprs += (pathlib.Path(outdir) / "dashboard.variables.txt").read_text().splitlines()  # label_values(metric, ...)
    used = set()
    for e in exprs:
        for m in METRIC.findall(e):
            used.add(next((m[: -len(s)] for s in HISTOGRAM_SUFFIXES if m.endswith(s)), m))
    sources = "".join(p.read_text(errors="replace") for d in ("pkg", "cmd") for p in (pathlib.Path(root) / d).rglob("*.cpp"))
    known = set(re.findall(r'"([a-z_][a-z0-9_]*)"', sources))
    bad = 0
    for n in sorted(used):
        if n in known:
            print(f"      {n}: registered")
        else:
            print(f"      {n}: NOT registered by kdesched (renamed or misspelled?)", file=sys.stderr)
            bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "--names":
        names(sys.argv[2], sys.argv[3])
    else:
        extract(sys.argv[1], sys.argv[2])
