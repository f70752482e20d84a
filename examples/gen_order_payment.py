#!/usr/bin/env python3
"""Writes the order/payment example snapshots (the story in the README), as `kubectl get
nodes,pods,pdb,namespaces -A -o json` would print them. Re-run after editing; the JSON is committed."""
import json
import pathlib

HERE = pathlib.Path(__file__).parent
T0 = "2026-11-30T08:00:00Z"


def node(name, zone):
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": T0,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                "topology.kubernetes.io/zone": zone}},
        "spec": {},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
    }


def pod(name, app, rs, node_name, image, cpu, mem, affinity=None, node_selector=None, deleting=False):
    spec = {"nodeName": node_name, "priority": 0, "schedulerName": "default-scheduler",
            "containers": [{"name": app, "image": image,
                            "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if affinity:
        spec["affinity"] = affinity
    if node_selector:
        spec["nodeSelector"] = node_selector
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "creationTimestamp": T0,
            "labels": {"app": app, "pod-template-hash": rs.rsplit("-", 1)[1]},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                 "uid": f"uid-{rs}", "controller": True, "blockOwnerDeletion": True}]}
    if deleting:
        meta["deletionTimestamp"] = "2026-11-30T09:00:30Z"
        meta["deletionGracePeriodSeconds"] = 30
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": T0,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


ANTI_ORDER = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
    {"labelSelector": {"matchLabels": {"app": "order"}}, "topologyKey": "kubernetes.io/hostname"}]}}

items = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default", "labels": {"kubernetes.io/metadata.name": "default"}}},
    node("node1", "zone-a"), node("node2", "zone-b"), node("node3", "zone-c"),
    # The old order pod, terminating after the rollout (it must not count as a violator).
    pod("order-7c5d8f9b6-k4m2p", "order", "order-7c5d8f9b6", "node1", "nginx:1.24", "100m", "256Mi", deleting=True),
    # The new order pod: the rollout's nodeSelector put it on node2, beside payment.
    pod("order-6d4f9c8b7-x2k9p", "order", "order-6d4f9c8b7", "node2", "nginx:1.25", "200m", "512Mi",
        node_selector={"kubernetes.io/hostname": "node2"}),
    pod("payment-5b7c9d6f4-q8wzr", "payment", "payment-5b7c9d6f4", "node2", "nginx:1.24", "100m", "256Mi",
        affinity=ANTI_ORDER),
]


def write(path, objs):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                                "items": objs}, indent=2) + "\n")


write(HERE / "order-payment" / "snapshot.json", items)
pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
       "metadata": {"name": "payment", "namespace": "default", "generation": 1},
       "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "payment"}}},
       "status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 1,
                  "desiredHealthy": 1, "expectedPods": 1}}
write(HERE / "order-payment-pdb" / "snapshot.json", items + [pdb])
