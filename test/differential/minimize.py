"""Delta debugging: shrink a case while the same difference persists.

A candidate is kept when both sides still disagree (status DIFFERENCE) and at least one pod of
the original difference is still in it on the same side (evicted only by kdesched, or only by
upstream), so the search does not drift to an unrelated difference. Passes: drop pods (ddmin),
drop nodes with their pods, drop other objects, then delete optional fields one at a time
(labels, affinity terms, constraints, tolerations, taints, requests, policy args), repeated
until nothing more can go or the budget is spent.
"""

import copy
import time

SIGNATURE_SIDES = ("extra", "missing")


def pods_of(diff):
    return {side: {(ns, name) for ns, name, _ in diff[side]} for side in SIGNATURE_SIDES}


class Minimizer:
    def __init__(self, evaluator, budget_seconds=90, max_tests=600):
        self.ev = evaluator
        self.budget = budget_seconds
        self.max_tests = max_tests
        self.tests = 0
        self.deadline = 0.0

    def out_of_budget(self):
        return self.tests >= self.max_tests or time.monotonic() > self.deadline

    def interesting(self, case):
        if self.out_of_budget():
            return False
        self.tests += 1
        r = self.ev.evaluate(case)
        if r["status"] != "DIFFERENCE":
            return False
        now = pods_of(r["closest"])
        return any(now[s] & self.signature[s] for s in SIGNATURE_SIDES)

    def minimize(self, case, diff):
        self.signature = pods_of(diff)
        self.deadline = time.monotonic() + self.budget
        self.tests = 0
        case = copy.deepcopy(case)
        changed = True
        while changed and not self.out_of_budget():
            changed = False
            for step in (self.drop_nodes, self.drop_pods, self.drop_others, self.drop_fields):
                new = step(case)
                if new is not None:
                    case, changed = new, True
        return case

    # --- passes -------------------------------------------------------------------------------

    def drop_pods(self, case):
        items = case["snapshot"]["items"]
        pods = [i for i, it in enumerate(items) if it["kind"] == "Pod"]
        keep = self.ddmin(case, pods)
        if keep is None:
            return None
        return self.without(case, set(pods) - set(keep))

    def drop_nodes(self, case):
        changed = None
        items = case["snapshot"]["items"]
        for node in [it["metadata"]["name"] for it in items if it["kind"] == "Node"]:
            if self.out_of_budget():
                break
            cur = changed or case
            idx = {i for i, it in enumerate(cur["snapshot"]["items"])
                   if (it["kind"] == "Node" and it["metadata"]["name"] == node)
                   or (it["kind"] == "Pod" and it["spec"].get("nodeName") == node)}
            cand = self.without(cur, idx)
            if self.interesting(cand):
                changed = cand
        return changed

    def drop_others(self, case):
        changed = None
        kinds = ("PodDisruptionBudget", "PersistentVolumeClaim", "Namespace", "PriorityClass")
        i = 0
        cur = case
        while i < len(cur["snapshot"]["items"]) and not self.out_of_budget():
            if cur["snapshot"]["items"][i]["kind"] in kinds:
                cand = self.without(cur, {i})
                if self.interesting(cand):
                    cur = changed = cand
                    continue
            i += 1
        return changed

    def drop_fields(self, case):
        changed = None
        cur = case
        progress = True
        while progress and not self.out_of_budget():
            progress = False
            for path in list(deletable_paths(cur)):
                if self.out_of_budget():
                    break
                cand = copy.deepcopy(cur)
                if not delete_path(cand, path) or empty_selectors(cand) > empty_selectors(cur):
                    continue
                if self.interesting(cand):
                    cur = changed = cand
                    progress = True
                    break
        return changed

    # --- helpers ------------------------------------------------------------------------------

    @staticmethod
    def without(case, indexes):
        c = copy.deepcopy(case)
        c["snapshot"]["items"] = [it for i, it in enumerate(c["snapshot"]["items"]) if i not in indexes]
        return c

    def ddmin(self, case, elems):
        """Classic ddmin over item indexes; returns the indexes to keep, or None if none can go."""
        n = 2
        cur = list(elems)
        reduced = False
        while len(cur) >= 1 and not self.out_of_budget():
            chunk = max(1, len(cur) // n)
            subsets = [cur[i:i + chunk] for i in range(0, len(cur), chunk)]
            progress = False
            for sub in subsets:
                complement = [e for e in cur if e not in sub]
                cand = self.without(case, set(elems) - set(complement))
                if self.interesting(cand):
                    cur, n, progress, reduced = complement, max(n - 1, 2), True, True
                    break
            if not progress:
                if chunk == 1:
                    break
                n = min(len(cur), n * 2)
        return cur if reduced else None


# Paths are tuples of keys/indexes from the case root.
POD_OPTIONAL = [("metadata", "annotations"), ("metadata", "ownerReferences"), ("metadata", "deletionTimestamp"),
                ("spec", "nodeSelector"), ("spec", "tolerations"), ("spec", "topologySpreadConstraints"),
                ("spec", "volumes"), ("spec", "initContainers"), ("spec", "priorityClassName"),
                ("spec", "affinity")]
AFFINITY_KEYS = {"nodeAffinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                 "preferredDuringSchedulingIgnoredDuringExecution", "namespaces", "namespaceSelector",
                 "matchLabelKeys", "mismatchLabelKeys", "matchFields", "matchExpressions", "matchLabels"}
SPREAD_KEYS = {"minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"}
POLICY_TOP = ("maxNoOfPodsToEvictPerNode", "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal", "nodeSelector")


def deletable_paths(case):
    items = case["snapshot"]["items"]
    for i, it in enumerate(items):
        base = ("snapshot", "items", i)
        if it["kind"] == "Pod":
            yield from pod_paths(it, base)
        elif it["kind"] == "Node":
            for k in it["metadata"].get("labels", {}):
                if k != "kubernetes.io/hostname":
                    yield base + ("metadata", "labels", k)
            for j in range(len(it["spec"].get("taints", []))):
                yield base + ("spec", "taints", j)
            if "unschedulable" in it["spec"]:
                yield base + ("spec", "unschedulable")
    yield from policy_paths(case["policy"])


def pod_paths(pod, base):
    for p in POD_OPTIONAL:
        if get_path(pod, p) is not None:
            yield base + p
    for k in pod["metadata"].get("labels", {}):
        yield base + ("metadata", "labels", k)
    for k in pod["spec"].get("nodeSelector", {}):
        yield base + ("spec", "nodeSelector", k)
    for j, t in enumerate(pod["spec"].get("tolerations", [])):
        yield base + ("spec", "tolerations", j)
    for j, c in enumerate(pod["spec"].get("topologySpreadConstraints", [])):
        yield base + ("spec", "topologySpreadConstraints", j)
        for k in SPREAD_KEYS & set(c):
            yield base + ("spec", "topologySpreadConstraints", j, k)
    if "affinity" in pod["spec"]:
        yield from nested_paths(pod["spec"]["affinity"], base + ("spec", "affinity"))
    c0 = pod["spec"]["containers"][0]
    if "resources" in c0:
        yield base + ("spec", "containers", 0, "resources")
        for k in ("cpu", "memory"):
            if k in c0["resources"].get("requests", {}):
                yield base + ("spec", "containers", 0, "resources", "requests", k)


def nested_paths(node, path):
    """Optional parts of an affinity: whole sub-affinities, single terms, selector entries."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in AFFINITY_KEYS:
                yield path + (k,)
            if k == "matchLabels":
                for lk in v:
                    yield path + (k, lk)
            yield from nested_paths(v, path + (k,))
    elif isinstance(node, list) and len(node) > 1:
        for j, v in enumerate(node):
            if isinstance(v, dict):
                yield path + (j,)
                yield from nested_paths(v, path + (j,))
    elif isinstance(node, list):
        for j, v in enumerate(node):
            yield from nested_paths(v, path + (j,))


def policy_paths(policy):
    for k in POLICY_TOP:
        if k in policy:
            yield ("policy", k)
    for pi, prof in enumerate(policy["profiles"]):
        for ci, cfg in enumerate(prof["pluginConfig"]):
            if cfg["name"] == "DefaultEvictor":
                yield ("policy", "profiles", pi, "pluginConfig", ci)
            for k in cfg.get("args", {}) or {}:
                if k not in ("thresholds", "targetThresholds", "nodeAffinityType", "podRestartThreshold"):
                    yield ("policy", "profiles", pi, "pluginConfig", ci, "args", k)


def empty_selectors(case):
    """How many label selectors are present but empty ({}: every pod). Deleting the last entry
    of a selector would turn "these pods" into "all pods", a different case than the one being
    minimized, so such a deletion is not tried."""
    n = 0

    def visit(node):
        nonlocal n
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "labelSelector" and isinstance(v, dict) and not v.get("matchLabels") and not v.get("matchExpressions"):
                    n += 1
                visit(v)
        elif isinstance(node, list):
            for v in node:
                visit(v)
    for it in case["snapshot"]["items"]:
        if it["kind"] == "Pod":
            visit(it["spec"])
    return n


def get_path(obj, path):
    for p in path:
        if isinstance(obj, dict) and p in obj:
            obj = obj[p]
        elif isinstance(obj, list) and isinstance(p, int) and p < len(obj):
            obj = obj[p]
        else:
            return None
    return obj


def delete_path(case, path):
    parent = get_path(case, path[:-1])
    last = path[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
        if len(path) >= 2 and path[-2] == "requests":
            # The API server defaults a missing request to its limit: drop both, or the
            # object could not come from a cluster.
            limits = get_path(case, path[:-2] + ("limits",))
            if isinstance(limits, dict):
                limits.pop(last, None)
        if last == "deletionTimestamp":
            parent.pop("deletionGracePeriodSeconds", None)
        if last == "initContainers":
            pod = get_path(case, path[:-2])
            pod["status"].pop("initContainerStatuses", None)
        return True
    if isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        del parent[last]
        return True
    return False
