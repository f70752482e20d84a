"""Just enough Kubernetes semantics to write classification predicates over a small case:
selectors, node selector terms, taints, requests. Not used to decide anything the two sides
are compared on."""

import re

UNITS = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9}


def quantity(q, milli=False):
    """A resource quantity as a number (millis for cpu when milli)."""
    if q is None:
        return 0
    s = str(q)
    m = re.fullmatch(r"([0-9.]+)(m|Ki|Mi|Gi|Ti|k|M|G)?", s)
    if not m:
        return 0
    v = float(m.group(1))
    unit = m.group(2)
    if unit == "m":
        return v if milli else v / 1000
    v *= UNITS.get(unit, 1)
    return v * 1000 if milli else v


def match_label_selector(sel, labels):
    if sel is None:
        return False
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e["key"], e["operator"], e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


def match_node_expr(e, node):
    labels = node["metadata"].get("labels", {})
    k, op, vals = e["key"], e["operator"], e.get("values") or []
    if op == "In":
        return labels.get(k) in vals
    if op == "NotIn":
        return labels.get(k) not in vals
    if op == "Exists":
        return k in labels
    if op == "DoesNotExist":
        return k not in labels
    if op in ("Gt", "Lt"):
        try:
            a, b = int(labels[k]), int(vals[0])
        except (KeyError, ValueError, IndexError):
            return False
        return a > b if op == "Gt" else a < b
    return False


def match_node_term(term, node):
    exprs = term.get("matchExpressions") or []
    fields = term.get("matchFields") or []
    if not exprs and not fields:
        return False
    if not all(match_node_expr(e, node) for e in exprs):
        return False
    for f in fields:
        name = node["metadata"]["name"]
        if f["operator"] == "In" and name not in f.get("values", []):
            return False
        if f["operator"] == "NotIn" and name in f.get("values", []):
            return False
    return True


def pods(case):
    return [i for i in case["snapshot"]["items"] if i["kind"] == "Pod"]


def nodes(case):
    return [i for i in case["snapshot"]["items"] if i["kind"] == "Node"]


def pod_by_key(case):
    return {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods(case)}


def anti_affinity_terms(pod):
    return ((pod["spec"].get("affinity") or {}).get("podAntiAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution") or []


def spread_constraints(pod):
    return pod["spec"].get("topologySpreadConstraints") or []


def ready(pod):
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", []))


def terminating(pod):
    return "deletionTimestamp" in pod["metadata"]


def requests(pod):
    r = {"cpu": 0.0, "memory": 0.0}
    for c in pod["spec"].get("containers", []):
        req = (c.get("resources") or {}).get("requests") or {}
        r["cpu"] += quantity(req.get("cpu"), milli=True)
        r["memory"] += quantity(req.get("memory"))
    return r


def node_remaining(case, node):
    """allocatable minus the requests of the non-terminal pods bound to the node."""
    alloc = node["status"].get("allocatable", {})
    rem = {"cpu": quantity(alloc.get("cpu"), milli=True), "memory": quantity(alloc.get("memory")),
           "pods": quantity(alloc.get("pods"))}
    for p in pods(case):
        if p["spec"].get("nodeName") != node["metadata"]["name"]:
            continue
        if p["status"].get("phase") in ("Succeeded", "Failed"):
            continue
        r = requests(p)
        rem["cpu"] -= r["cpu"]
        rem["memory"] -= r["memory"]
        rem["pods"] -= 1
    return rem


def evictor_args(policy):
    for prof in policy["profiles"]:
        for cfg in prof["pluginConfig"]:
            if cfg["name"] == "DefaultEvictor":
                return cfg.get("args") or {}
    return {}


def plugin_args(policy, plugin):
    for prof in policy["profiles"]:
        for cfg in prof["pluginConfig"]:
            if cfg["name"] == plugin:
                return cfg.get("args") or {}
    return {}


def node_fit(policy, plugin):
    """Whether the plugin's decision runs a NodeFit check (DefaultEvictor nodeFit, or the
    plugin's own: node affinity always, topology spread unless topologyBalanceNodeFit is false)."""
    if evictor_args(policy).get("nodeFit"):
        return True
    if plugin == "RemovePodsViolatingNodeAffinity":
        return True
    if plugin == "RemovePodsViolatingTopologySpreadConstraint":
        return plugin_args(policy, plugin).get("topologyBalanceNodeFit", True) is not False
    return False
