#!/usr/bin/env python3
"""Writes snapshot.json: the PodLifeTime worked example (docs/strategies/pod-lifetime.md) at 2026-11-30T10:00Z."""
import json
import os


def node(name):
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "uid-" + name, "creationTimestamp": "2026-11-01T00:00:00Z",
                         "labels": {"kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def pod(ns, name, node_name, created, owner, phase="Running", app=None, statuses=None, init_statuses=None):
    meta = {"name": name, "namespace": ns, "uid": "uid-%s-%s" % (ns, name), "creationTimestamp": created,
            "labels": {"app": app or name.rsplit("-", 1)[0]},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                 "uid": "uid-" + owner[1], "controller": True}]}
    status = {"phase": phase, "qosClass": "Burstable", "startTime": created,
              "conditions": [{"type": "Ready", "status": "True" if not statuses else "False"}]}
    if statuses:
        status["containerStatuses"] = statuses
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"nodeName": node_name, "containers": [
                {"name": "main", "image": "registry.example/%s:1" % meta["labels"]["app"],
                 "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]},
            "status": status}


def waiting(reason, restarts):
    return [{"name": "main", "restartCount": restarts, "ready": False, "state": {"waiting": {"reason": reason}}}]


items = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}},
    node("node1"), node("node2"),
    # Two days old and crash-looping: evicted.
    pod("shop", "api-5f7c-1", "node1", "2026-11-28T09:00:00Z", ("ReplicaSet", "api-5f7c"),
        statuses=waiting("CrashLoopBackOff", 214)),
    # As old, healthy: kept (not in one of the states).
    pod("shop", "api-5f7c-2", "node2", "2026-11-28T09:00:00Z", ("ReplicaSet", "api-5f7c")),
    # Crash-looping for an hour only: kept (not older than a day).
    pod("shop", "api-5f7c-3", "node2", "2026-11-30T09:00:00Z", ("ReplicaSet", "api-5f7c"),
        statuses=waiting("CrashLoopBackOff", 12)),
    # Pending for three days on an init container that cannot pull its image: evicted first (oldest).
    pod("shop", "report-8d2e-1", "node2", "2026-11-27T06:30:00Z", ("ReplicaSet", "report-8d2e"), phase="Pending",
        init_statuses=waiting("ImagePullBackOff", 0)),
    # Crash-looping for four days but a PodDisruptionBudget allows no disruption: refused.
    pod("shop", "cache-0", "node1", "2026-11-26T10:00:00Z", ("StatefulSet", "cache"), app="cache",
        statuses=waiting("CrashLoopBackOff", 900)),
    # kube-system is excluded.
    pod("kube-system", "dns-6b9d-1", "node1", "2026-11-25T10:00:00Z", ("ReplicaSet", "dns-6b9d"),
        statuses=waiting("CrashLoopBackOff", 1000)),
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
     "metadata": {"name": "cache", "namespace": "shop", "generation": 1},
     "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "cache"}}},
     "status": {"observedGeneration": 1, "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 1,
                "expectedPods": 1}},
]

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "snapshot.json")
with open(out, "w") as f:
    json.dump({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}, f, indent=2)
    f.write("\n")
