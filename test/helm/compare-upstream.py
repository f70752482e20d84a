#!/usr/bin/env python3
"""Compares `helm template` of upstream descheduler v0.36.0's chart with kdesched's chart, both
rendered with the same release name and values.

  compare-upstream.py UPSTREAM.yaml KDESCHED.yaml [--names]

Without --names (kdesched's chart keeps its own name): the same kinds of objects, and the same
workload fields. With --names (nameOverride: descheduler): also every upstream object under the
same kind, namespace and name, the same labels and selectors, the same container name.

The differences kdesched makes on purpose are listed below (EXPECTED); anything else is printed
and the exit status is 1.
"""
import sys

import yaml

# Object kinds kdesched's chart may add: the leader-election Role (upstream puts those rules in its
# ClusterRole), HEAD's PodDisruptionBudget, the dashboard ConfigMap and the PrometheusRule.
EXTRA_KINDS = {"Role", "RoleBinding", "PodDisruptionBudget", "PrometheusRule"}
# Workload fields kdesched sets differently on purpose (docs/install.md, "What differs"):
EXPECTED = {
    "container.image": "kdesched's image (upstream's repository falls back to it)",
    "container.securityContext": "runAsGroup 65532 added (the image's group)",
    "container.readinessProbe": "kdesched serves /readyz",
    "pod.securityContext": "runAsNonRoot, uid/gid 65532 and seccomp RuntimeDefault kept under the user's keys",
    "container.volumeMounts": "the policy mount is readOnly",
}
# Labels Helm stamps with the chart's own name and version.
CHART_LABELS = {"helm.sh/chart", "app.kubernetes.io/version"}


def load(path):
    return [d for d in yaml.safe_load_all(open(path)) if d]


def key(d):
    return (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"])


def pod_template(d):
    return d["spec"]["jobTemplate"]["spec"]["template"] if d["kind"] == "CronJob" else d["spec"]["template"]


def strip_labels(labels):
    return {k: v for k, v in (labels or {}).items() if k not in CHART_LABELS}


class Diff:
    def __init__(self):
        self.problems = []

    def eq(self, where, up, ours):
        if up != ours:
            self.problems.append(f"{where}: upstream {up!r} != kdesched {ours!r}")

    def subset(self, where, up, ours):
        missing = {k: v for k, v in (up or {}).items() if (ours or {}).get(k) != v}
        if missing:
            self.problems.append(f"{where}: upstream's {missing!r} missing in kdesched's {ours!r}")


def compare_workload(diff, up, ours, names):
    w = f"{up['kind']}/{up['metadata']['name']}"
    if up["kind"] == "CronJob":
        for f in ("schedule", "suspend", "concurrencyPolicy", "startingDeadlineSeconds", "successfulJobsHistoryLimit",
                  "failedJobsHistoryLimit", "timeZone"):
            diff.eq(f"{w} spec.{f}", up["spec"].get(f), ours["spec"].get(f))
        ujt, ojt = up["spec"]["jobTemplate"], ours["spec"]["jobTemplate"]
        for f in ("ttlSecondsAfterFinished", "activeDeadlineSeconds"):
            diff.eq(f"{w} jobTemplate.spec.{f}", ujt["spec"].get(f), ojt["spec"].get(f))
        for f in ("labels", "annotations"):
            diff.subset(f"{w} jobTemplate.metadata.{f}", ujt.get("metadata", {}).get(f), ojt.get("metadata", {}).get(f))
    if up["kind"] == "Deployment":
        diff.eq(f"{w} spec.replicas", up["spec"].get("replicas"), ours["spec"].get("replicas"))
        if names:
            diff.eq(f"{w} spec.selector", up["spec"]["selector"], ours["spec"]["selector"])
    upt, ourt = pod_template(up), pod_template(ours)
    # checksum/config hashes each chart's own ConfigMap text; the name label differs without --names.
    skip = {"checksum/config"} | (set() if names else {"app.kubernetes.io/name"})
    for f in ("labels", "annotations"):
        diff.subset(f"{w} pod metadata.{f}", {k: v for k, v in (upt["metadata"].get(f) or {}).items() if k not in skip},
                    ourt["metadata"].get(f))
    ups, ours_s = upt["spec"], ourt["spec"]
    for f in sorted(set(ups) | set(ours_s)):
        if f == "containers" or f"pod.{f}" in EXPECTED:
            continue
        diff.eq(f"{w} pod spec.{f}", ups.get(f), ours_s.get(f))
    uc, oc = ups["containers"][0], ours_s["containers"][0]
    for f in sorted(set(uc) | set(oc)):
        if f"container.{f}" in EXPECTED or (f == "name" and not names):
            continue
        diff.eq(f"{w} container.{f}", uc.get(f), oc.get(f))
    strip = lambda ms: [(m["name"], m["mountPath"]) for m in ms or []]
    diff.eq(f"{w} container.volumeMounts (name, path)", strip(uc.get("volumeMounts")), strip(oc.get("volumeMounts")))


def compare_service_monitor(diff, up, ours, names):
    w = f"ServiceMonitor/{up['metadata']['name']}"
    for f in ("jobLabel", "namespaceSelector") + (("selector",) if names else ()):
        diff.eq(f"{w} spec.{f}", up["spec"].get(f), ours["spec"].get(f))
    ue, oe = up["spec"]["endpoints"][0], ours["spec"]["endpoints"][0]
    for f in sorted((set(ue) | set(oe)) - {"path"}):  # kdesched names path: /metrics, the default
        u, o = ue.get(f), oe.get(f)
        if f == "tlsConfig":
            u, o = u or {}, o or {}
        diff.eq(f"{w} endpoint.{f}", u, o)


def rename(node, old, new):
    """Every string equal to old (a full name) replaced by new, recursively."""
    if isinstance(node, dict):
        return {k: rename(v, old, new) for k, v in node.items()}
    if isinstance(node, list):
        return [rename(v, old, new) for v in node]
    return new if node == old else node


def main():
    up_docs, our_docs = load(sys.argv[1]), load(sys.argv[2])
    names = "--names" in sys.argv[3:]
    if not names:  # compare fields, not names: kdesched's full name read as upstream's
        full = lambda docs: next(d["metadata"]["name"] for d in docs if d["kind"] in ("CronJob", "Deployment"))
        our_docs = rename(our_docs, full(our_docs), full(up_docs))
    diff = Diff()
    ups = {key(d): d for d in up_docs}
    ours = {key(d): d for d in our_docs}
    if names:
        for k in sorted(set(ups) - set(ours)):
            diff.problems.append(f"upstream's {k[0]} {k[1]}/{k[2]} has no kdesched object of that name")
        for k in sorted(set(ours) - set(ups)):
            if k[0] not in EXTRA_KINDS and not (k[0] == "ConfigMap" and k[2].endswith("-dashboard")):
                diff.problems.append(f"kdesched's {k[0]} {k[1]}/{k[2]} has no upstream counterpart")
        for k in sorted(set(ups) & set(ours)):
            diff.subset(f"{k[0]}/{k[2]} metadata.labels", strip_labels(ups[k]["metadata"].get("labels")),
                        ours[k]["metadata"].get("labels"))
        pairs = [(ups[k], ours[k]) for k in sorted(set(ups) & set(ours))]
    else:
        upk = sorted(k[0] for k in ups)
        ourk = sorted(k[0] for k in ours if k[0] not in EXTRA_KINDS)
        diff.eq("kinds of objects", upk, ourk)
        by_kind = lambda docs, kind: [d for d in docs if d["kind"] == kind]
        pairs = [(u, o) for kind in ("CronJob", "Deployment", "Service", "ServiceMonitor", "ConfigMap")
                 for u, o in zip(by_kind(up_docs, kind), by_kind(our_docs, kind))]
    for u, o in pairs:
        if u["kind"] in ("CronJob", "Deployment"):
            compare_workload(diff, u, o, names)
        elif u["kind"] == "ServiceMonitor":
            compare_service_monitor(diff, u, o, names)
        elif u["kind"] == "Service":
            for f in ("clusterIP", "ports", "type", "ipFamilyPolicy", "ipFamilies") + (("selector",) if names else ()):
                diff.eq(f"Service spec.{f}", u["spec"].get(f), o["spec"].get(f))
        elif u["kind"] == "ConfigMap":
            diff.eq("ConfigMap policy.yaml", yaml.safe_load(u["data"]["policy.yaml"]),
                    yaml.safe_load(o["data"]["policy.yaml"]))
        elif u["kind"] == "ClusterRoleBinding":
            diff.eq("ClusterRoleBinding subjects", u["subjects"], o["subjects"])
            diff.eq("ClusterRoleBinding roleRef", u["roleRef"], o["roleRef"])
    for p in diff.problems:
        print(f"      {p}", file=sys.stderr)
    sys.exit(1 if diff.problems else 0)


if __name__ == "__main__":
    main()
