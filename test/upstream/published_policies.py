#!/usr/bin/env python3
"""Every DeschedulerPolicy that upstream descheduler v0.36 publishes must load and plan with kdesched.

Upstream's own files are read from its Go module (downloaded checksum-verified by `go mod download`
into the same cache bench/build-upstream.sh uses); nothing of upstream's is copied into this repo.
Sources: README.md and docs/user-guide.md (every ```yaml block with kind DeschedulerPolicy),
examples/*.y*ml, kubernetes/base/configmap.yaml (its policy.yaml), and the chart's default
deschedulerPolicy rendered by the real helm from charts/descheduler.

Each policy runs through `kdesched plan` on examples/mixed/snapshot.json (plus the PriorityClasses
the policies name) and must exit 0. The only accepted failures are listed in EXPECTED below, each
with the reason (a block that is not valid YAML for upstream either), and policies refused only
because they enable a plugin in PENDING_PLUGINS (not implemented yet: reported as PENDING, not
counted; each plugin leaves the set when it lands).

Usage: published_policies.py KDESCHED_BIN [--keep DIR]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODULE = "sigs.k8s.io/descheduler"
VERSION = "v0.36.0"

# (source, first line) -> the reason it may fail. Nothing else may.
EXPECTED = {
    # The README's "Example policy" has `- ...` and `[...]` placeholders: not YAML, for upstream either
    # (the check below proves the YAML parser rejects it).
    ("README.md", 229): "placeholders `- ...`/`[...]`: not valid YAML",
}


# Upstream plugins kdesched does not have yet (empty since all 11 landed; kept for the next
# upstream release's plugins). A policy refused for anything else fails.
PENDING_PLUGINS: set[str] = set()


def only_pending_plugins(stderr, path):
    """True when every error kdesched printed is an unknown plugin listed in PENDING_PLUGINS."""
    text = stderr.strip()
    if text.startswith("kdesched: "):
        text = text[len("kdesched: "):]
    errors = [e for e in re.split(r";(?=" + re.escape(path) + r": )", text) if e]
    for e in errors:
        m = re.search(r'unknown plugin "([A-Za-z]+)"', e)
        if not m or m.group(1) not in PENDING_PLUGINS:
            return False
    return bool(errors)


def cache_root():
    return os.environ.get("KDESCHED_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "kdesched"))


def module_dir():
    env = dict(os.environ)
    root = cache_root()
    env.update(GOMODCACHE=os.path.join(root, "go", "mod"), GOPATH=os.path.join(root, "go", "path"),
               GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    go = "go" if subprocess.run(["which", "go"], capture_output=True).returncode == 0 else "/usr/local/go/bin/go"
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([go, "mod", "download", "-json", f"{MODULE}@{VERSION}"], cwd=d, env=env,
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"published_policies: go mod download {MODULE}@{VERSION} failed:\n{out.stderr}{out.stdout}")
    return json.loads(out.stdout)["Dir"]


def markdown_policies(path, rel):
    lines = open(path, encoding="utf-8").read().split("\n")
    out, block, start = [], None, 0
    for i, line in enumerate(lines, 1):
        if block is None and re.match(r"^\s*```\s*ya?ml\s*$", line):
            block, start = [], i + 1
        elif block is not None and re.match(r"^\s*```\s*$", line):
            text = "\n".join(block) + "\n"
            if "DeschedulerPolicy" in text:
                out.append((rel, start, text))
            block = None
        elif block is not None:
            block.append(line)
    return out


def helm_bin():
    for cand in sorted(os.listdir(cache_root())) if os.path.isdir(cache_root()) else []:
        p = os.path.join(cache_root(), cand, "bin", "helm")
        if os.access(p, os.X_OK):
            return p
    return "helm"


def chart_policy(moddir):
    chart = os.path.join(moddir, "charts", "descheduler")
    out = subprocess.run([helm_bin(), "template", "upstream", chart, "--show-only", "templates/configmap.yaml"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"published_policies: helm template of upstream's chart failed:\n{out.stderr}")
    cm = yaml.safe_load(out.stdout)
    return [("charts/descheduler (default values)", 1, cm["data"]["policy.yaml"])]


def collect(moddir):
    pols = []
    for rel in ("README.md", "docs/user-guide.md"):
        pols += markdown_policies(os.path.join(moddir, rel), rel)
    ex = os.path.join(moddir, "examples")
    for name in sorted(os.listdir(ex)):
        if name.endswith((".yml", ".yaml")):
            pols.append((f"examples/{name}", 1, open(os.path.join(ex, name), encoding="utf-8").read()))
    cm = yaml.safe_load(open(os.path.join(moddir, "kubernetes", "base", "configmap.yaml"), encoding="utf-8"))
    pols.append(("kubernetes/base/configmap.yaml", 1, cm["data"]["policy.yaml"]))
    pols += chart_policy(moddir)
    return pols


def snapshot_with_priority_classes(policies, workdir):
    """examples/mixed plus a PriorityClass for every priorityThreshold.name the policies use."""
    snap = json.load(open(os.path.join(ROOT, "examples", "mixed", "snapshot.json"), encoding="utf-8"))
    names = set()
    for _, _, text in policies:
        names.update(re.findall(r"priorityThreshold:\s*\n\s*name:\s*\"?([A-Za-z0-9.-]+)\"?", text))
    for i, n in enumerate(sorted(names)):
        snap["items"].append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                              "metadata": {"name": n}, "value": 1000 + i})
    path = os.path.join(workdir, "snapshot.json")
    json.dump(snap, open(path, "w", encoding="utf-8"))
    return path


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    moddir = module_dir()
    policies = collect(moddir)
    failures, passed, pending = [], 0, 0
    with tempfile.TemporaryDirectory() as work:
        snap = snapshot_with_priority_classes(policies, work)
        for idx, (src, line, text) in enumerate(policies):
            path = os.path.join(work, f"policy-{idx}.yaml")
            open(path, "w", encoding="utf-8").write(text)
            r = subprocess.run([binary, "plan", "--snapshot", snap, "--policy-config-file", path],
                               capture_output=True, text=True)
            expected = EXPECTED.get((src, line))
            if r.returncode == 0 and expected is None:
                passed += 1
                print(f"ok    {src}:{line}")
            elif r.returncode != 0 and expected is not None:
                try:
                    yaml.safe_load(text)
                    failures.append(f"{src}:{line}: expected invalid YAML ({expected}) but PyYAML parses it")
                    print(f"FAIL  {src}:{line}: PyYAML parses a block listed as invalid")
                except yaml.YAMLError:
                    passed += 1
                    print(f"ok    {src}:{line} (rejected as upstream does: {expected})")
            elif r.returncode == 2 and expected is None and only_pending_plugins(r.stderr, path):
                pending += 1
                names = sorted(set(re.findall(r'unknown plugin "([A-Za-z]+)"', r.stderr)))
                print(f"PENDING {src}:{line}: needs {', '.join(names)} (not implemented yet)")
            else:
                err = (r.stderr or r.stdout).strip().splitlines()
                failures.append(f"{src}:{line}: rc={r.returncode}: {err[0] if err else ''}")
                print(f"FAIL  {src}:{line}: rc={r.returncode}: {err[0] if err else ''}")
    print(f"     {pending} of {len(policies)} PENDING on plugins not implemented yet: {sorted(PENDING_PLUGINS)}")
    print(f"upstream published policies: {passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
