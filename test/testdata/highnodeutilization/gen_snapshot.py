#!/usr/bin/env python3
"""Writes snapshot.json for the HighNodeUtilization plan golden test, which plans
policies/high-node-utilization.yaml (cpu, memory and pods at 20%) over it, as `kubectl get
nodes,pods,namespaces -A -o json` would print it. Four 4-CPU / 8Gi / 20-pod nodes:

  node1  cpu 60%    memory 37.5%  pods 30%   a destination
  node2  cpu 45%    memory 25%    pods 20%   a destination (memory above 20%)
  node3  cpu 12.5%  memory 9.4%   pods 15%   underutilized: its two shop pods go, the DaemonSet
                                             pod stays (a DaemonSet pod is never evicted)
  node4  cpu 5%     memory 3.1%   pods 5%    underutilized and emptied first (least used)

Re-run after editing; the JSON is committed, then run the golden test with UPDATE_GOLDEN=1."""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
from kube_objects import ready_node  # noqa: E402
T0 = "2026-11-30T08:00:00Z"


def node(name):
    return ready_node(name, T0)


def pod(name, node_name, cpu, mem, owner, namespace="shop", owner_kind="ReplicaSet", priority=0):
    app = owner.rsplit("-", 1)[0] if owner_kind == "ReplicaSet" else owner
    spec = {"nodeName": node_name, "schedulerName": "default-scheduler", "priority": priority,
            "containers": [{"name": "main", "image": "registry.example/" + app + ":1",
                            "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "creationTimestamp": T0,
            "labels": {"app": app},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind, "name": owner,
                                 "uid": f"uid-{owner}", "controller": True, "blockOwnerDeletion": True}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": T0,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


items = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}
    for ns in ("kube-system", "shop")
]
items += [node(n) for n in ("node1", "node2", "node3", "node4")]
# node1: 2400m, 3Gi, 6 pods.
items += [pod(f"api-7f9c-{i}", "node1", "400m", "512Mi", "api-7f9c") for i in range(1, 7)]
# node2: 1800m, 2Gi, 4 pods.
items += [pod(f"db-0{i}", "node2", "450m", "512Mi", "db", owner_kind="StatefulSet") for i in range(4)]
# node3: 500m, 768Mi, 3 pods; the higher priority pod goes last.
items += [pod("log-agent-node3", "node3", "100m", "256Mi", "log-agent", namespace="kube-system",
              owner_kind="DaemonSet", priority=2000001000),
          pod("web-5d8b-1", "node3", "200m", "256Mi", "web-5d8b", priority=1000),
          pod("worker-6c4d-1", "node3", "200m", "256Mi", "worker-6c4d")]
# node4: 200m, 256Mi, 1 pod.
items += [pod("worker-6c4d-2", "node4", "200m", "256Mi", "worker-6c4d")]

doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
(HERE / "snapshot.json").write_text(json.dumps(doc, indent=2) + "\n")
