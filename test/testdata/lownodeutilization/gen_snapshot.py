#!/usr/bin/env python3
"""Writes snapshot.json for the LowNodeUtilization plan golden test and the worked example in
docs/strategies/low-node-utilization.md, as `kubectl get nodes,pods,namespaces,priorityclasses -A
-o json` would print it. Four 4-CPU / 8Gi / 20-pod nodes:

  node1  cpu 80%  memory 50%    pods 45%   overutilized (cpu)
  node2  cpu 50%  memory 37.5%  pods 40%   neither (50% is not above 50%)
  node3  cpu 10%  memory 12.5%  pods 10%   underutilized
  node4  cpu 30%  memory 75%    pods 30%   overutilized (memory)

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


def pod(name, node_name, cpu, mem, owner_kind="ReplicaSet", owner=None, namespace="shop", priority=None,
        priority_class=None):
    app = owner.rsplit("-", 1)[0] if owner_kind == "ReplicaSet" else (owner or name)
    spec = {"nodeName": node_name, "schedulerName": "default-scheduler",
            "containers": [{"name": "main", "image": "registry.example/" + app + ":1",
                            "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}
    if priority is not None:
        spec["priority"] = priority
    if priority_class:
        spec["priorityClassName"] = priority_class
    meta = {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "creationTimestamp": T0,
            "labels": {"app": app},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner_kind, "name": owner,
                                 "uid": f"uid-{owner}", "controller": True, "blockOwnerDeletion": True}]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec,
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": T0,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def log_agent(node_name):
    return pod("log-agent-" + node_name, node_name, "100m", "256Mi", owner_kind="DaemonSet", owner="log-agent",
               namespace="kube-system", priority=2000001000, priority_class="system-node-critical")


def priority_class(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


items = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}}}
    for ns in ("kube-system", "shop", "analytics")
]
items += [priority_class("batch-low", 100), priority_class("web", 1000), priority_class("stateful", 10000)]
items += [node(n) for n in ("node1", "node2", "node3", "node4")]

# node1: cpu 3200m (80%), memory 4Gi (50%), 9 pods (45%).
items += [log_agent("node1"),
          pod("kube-proxy-node1", "node1", "100m", "128Mi", owner_kind="DaemonSet", owner="kube-proxy",
              namespace="kube-system", priority=2000001000, priority_class="system-node-critical")]
items += [pod(f"api-7f9c-{i}", "node1", "500m", "512Mi", owner="api-7f9c", priority=1000, priority_class="web")
          for i in range(1, 5)]
items += [pod("frontend-5d8b-1", "node1", "200m", "384Mi", owner="frontend-5d8b", priority=1000, priority_class="web")]
# No priorityClassName, so admission gave them priority 0: the first to go.
items += [pod(f"worker-6c4d-{i}", "node1", "400m", "640Mi", owner="worker-6c4d", priority=0) for i in (1, 2)]

# node2: cpu 2000m (50%), memory 3Gi (37.5%), 8 pods (40%).
items += [log_agent("node2")]
items += [pod(f"shop-84b2-{i}", "node2", "250m", "384Mi", owner="shop-84b2", priority=1000, priority_class="web")
          for i in range(1, 7)]
items += [pod("checkout-3a1e-1", "node2", "400m", "512Mi", owner="checkout-3a1e", priority=1000, priority_class="web")]

# node3: cpu 400m (10%), memory 1Gi (12.5%), 2 pods (10%).
items += [log_agent("node3"),
          pod("shop-84b2-7", "node3", "300m", "768Mi", owner="shop-84b2", priority=1000, priority_class="web")]

# node4: cpu 1200m (30%), memory 6Gi (75%), 6 pods (30%).
items += [log_agent("node4"),
          pod("analytics-9e2f-1", "node4", "300m", "1Gi", owner="analytics-9e2f", namespace="analytics", priority=100,
              priority_class="batch-low"),
          pod("analytics-9e2f-2", "node4", "300m", "1Gi", owner="analytics-9e2f", namespace="analytics", priority=100,
              priority_class="batch-low"),
          pod("cache-0", "node4", "300m", "3Gi", owner_kind="StatefulSet", owner="cache", priority=10000,
              priority_class="stateful"),
          pod("web-2b7a-1", "node4", "100m", "512Mi", owner="web-2b7a", priority=1000, priority_class="web"),
          pod("web-2b7a-2", "node4", "100m", "256Mi", owner="web-2b7a", priority=1000, priority_class="web")]

doc = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}
(HERE / "snapshot.json").write_text(json.dumps(doc, indent=2) + "\n")
