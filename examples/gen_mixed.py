#!/usr/bin/env python3
"""Writes examples/mixed/snapshot.json: a small cluster with one violation of each kind the
strategies act on, so every policy in policies/ has something to explain:
  - anti-affinity: cart's new pod landed beside checkout, whose anti-affinity forbids app=cart;
  - node affinity: node3 lost disk=ssd, and report requires it;
  - topology spread: web has 4 pods in zone-a and none in zone-b/zone-c (maxSkew 1);
  - utilization: node1 is loaded far above 50% while node4 and node5 sit below 20%."""
import json
import pathlib

HERE = pathlib.Path(__file__).parent
T0 = "2026-11-30T08:00:00Z"


def node(name, zone, labels=None, cpu="8", mem="32Gi"):
    lab = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone}
    lab.update(labels or {})
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": lab, "creationTimestamp": T0},
            "spec": {}, "status": {"allocatable": {"cpu": cpu, "memory": mem, "pods": "110"},
                                   "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, app, node_name, cpu="100m", mem="128Mi", ns="shop", affinity=None, spread=None, priority=0):
    rs = f"{app}-7d4b9"
    spec = {"nodeName": node_name, "priority": priority,
            "containers": [{"name": app, "image": f"registry.example/{app}:1", "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if affinity:
        spec["affinity"] = affinity
    if spread:
        spec["topologySpreadConstraints"] = spread
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "creationTimestamp": T0,
                         "labels": {"app": app},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                              "uid": f"uid-{rs}", "controller": True}]},
            "spec": spec,
            "status": {"phase": "Running", "startTime": T0, "conditions": [{"type": "Ready", "status": "True"}]}}


items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "shop"}}}]
items += [node("node1", "zone-a", {"disk": "ssd"}), node("node2", "zone-a", {"disk": "ssd"}),
          node("node3", "zone-b"), node("node4", "zone-b", {"disk": "ssd"}), node("node5", "zone-c")]
anti_cart = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "cart"}}, "topologyKey": "kubernetes.io/hostname"}]}}
needs_ssd = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
    {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}}
web_spread = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule",
               "labelSelector": {"matchLabels": {"app": "web"}}}]
items += [
    pod("checkout-0", "checkout", "node2", affinity=anti_cart),
    pod("cart-0", "cart", "node2"),
    pod("report-0", "report", "node3", affinity=needs_ssd),
]
items += [pod(f"web-{i}", "web", "node1" if i % 2 == 0 else "node2", spread=web_spread) for i in range(4)]
# node1 carries the heavy batch work.
items += [pod(f"batch-{i}", "batch", "node1", cpu="1500m", mem="6Gi", ns="shop") for i in range(4)]
items += [pod("cache-0", "cache", "node2", cpu="1", mem="4Gi"), pod("api-0", "api", "node3", cpu="1", mem="4Gi")]

(HERE / "mixed" / "snapshot.json").write_text(json.dumps(
    {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, indent=2) + "\n")
