#!/usr/bin/env python3
"""Writes snapshot.json for the RemovePodsViolatingNodeTaints plan golden test, which plans
policies/node-taints.yaml over it, as `kubectl get nodes,pods,namespaces -A -o json` would print
it. Three nodes:

  node1  no taint
  node2  dedicated=gpu:NoSchedule (added after its pods were scheduled), soft:PreferNoSchedule
  node3  node.kubernetes.io/unschedulable:NoSchedule (cordoned; excluded by the policy),
         maintenance:NoExecute (left to the kubelet)

Re-run after editing; the JSON is committed, then run the golden test with UPDATE_GOLDEN=1."""
import json
import pathlib

HERE = pathlib.Path(__file__).parent
T0 = "2026-11-30T08:00:00Z"


def node(name, taints=(), unschedulable=False):
    spec = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": T0,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": spec,
        "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "20"},
                   "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "20"},
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
    }


def pod(name, node_name, owner, namespace="shop", tolerations=(), owner_kind="ReplicaSet"):
    app = owner.rsplit("-", 1)[0] if owner_kind == "ReplicaSet" else owner
    spec = {"nodeName": node_name, "schedulerName": "default-scheduler",
            "containers": [{"name": "main", "image": "registry.example/" + app + ":1",
                            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}]}
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "creationTimestamp": T0,
            "labels": {"app": app},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind, "name": owner,
                                 "uid": f"uid-{owner}", "controller": True, "blockOwnerDeletion": True}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": T0,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


GPU = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
items = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}
    for ns in ("kube-system", "shop", "ml")
]
items += [node("node1"),
          node("node2", [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                         {"key": "soft", "effect": "PreferNoSchedule"}]),
          node("node3", [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"},
                         {"key": "maintenance", "effect": "NoExecute"}], unschedulable=True)]
items += [pod("web-5d8b-1", "node1", "web-5d8b"),
          # Scheduled before node2 was dedicated to GPU work: both go.
          pod("web-5d8b-2", "node2", "web-5d8b"),
          pod("cart-77aa-1", "node2", "cart-77aa"),
          # Tolerates the taint by key and value, or by key alone: both stay.
          pod("train-3c1e-1", "node2", "train-3c1e", namespace="ml", tolerations=[GPU]),
          pod("train-3c1e-2", "node2", "train-3c1e", namespace="ml",
              tolerations=[{"key": "dedicated", "operator": "Exists"}]),
          # Tolerates another value only: goes.
          pod("infer-9f00-1", "node2", "infer-9f00", namespace="ml",
              tolerations=[{"key": "dedicated", "operator": "Equal", "value": "tpu", "effect": "NoSchedule"}]),
          # kube-system is excluded by the policy.
          pod("kube-proxy-node2", "node2", "kube-proxy", namespace="kube-system", owner_kind="DaemonSet"),
          # The cordon taint is excluded and NoExecute is not the plugin's: stays.
          pod("web-5d8b-3", "node3", "web-5d8b")]

doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
(HERE / "snapshot.json").write_text(json.dumps(doc, indent=2) + "\n")
