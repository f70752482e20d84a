#!/usr/bin/env python3
"""Writes the balance-by-usage example (examples/usage-metrics-server/ and usage-prometheus/): three
nodes whose pods request the same, while node1 is busy and node2/node3 idle. The snapshot is what
`kubectl get nodes,pods,namespaces -A -o json` prints, followed by what `kubectl get --raw
/apis/metrics.k8s.io/v1beta1/nodes` and `.../pods` print; the Prometheus answer is the JSON body of
`/api/v1/query?query=instance:node_cpu:rate:sum`. Re-run after editing; the files are committed."""
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE.parent / "test" / "testdata"))
from kube_objects import ready_node  # noqa: E402
T0 = "2026-11-30T08:00:00Z"
SAMPLED = "2026-11-30T09:59:40Z"   # the metrics-server scrape, 20 s before the plan's --now
NOW = 1796032800                   # 2026-11-30T10:00:00Z

# node → (cpu used in millicores, memory used in MiB); every node's pods request 2 cpu in all.
USAGE = {"node1": (3800, 6144), "node2": (800, 3072), "node3": (800, 3072)}
# pod → (node, cpu used m, memory used Mi); each requests 500m cpu and 1Gi.
PODS = {
    "web-5f7d8-a1": ("node1", 900, 1024), "web-5f7d8-a2": ("node1", 900, 1024),
    "web-5f7d8-a3": ("node1", 900, 1024), "web-5f7d8-a4": ("node1", 900, 1024),
    "api-6c9b4-b1": ("node2", 200, 768), "api-6c9b4-b2": ("node2", 200, 768),
    "api-6c9b4-b3": ("node2", 200, 768), "api-6c9b4-b4": ("node2", 200, 768),
    "api-6c9b4-c1": ("node3", 200, 768), "api-6c9b4-c2": ("node3", 200, 768),
    "api-6c9b4-c3": ("node3", 200, 768), "api-6c9b4-c4": ("node3", 200, 768),
}


def node(name):
    return ready_node(name, T0, memory="16Gi", pods="110")


def pod(name, node_name):
    rs = name.rsplit("-", 1)[0]
    app = rs.split("-")[0]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", "creationTimestamp": T0,
                         "labels": {"app": app},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs,
                                              "uid": f"uid-{rs}", "controller": True}]},
            "spec": {"nodeName": node_name, "priority": 0,
                     "containers": [{"name": app, "image": "nginx:1.25",
                                     "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}]},
            "status": {"phase": "Running", "qosClass": "Burstable", "startTime": T0,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def node_metrics():
    return {"kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
            "items": [{"metadata": {"name": n, "creationTimestamp": "2026-11-30T10:00:00Z",
                                    "labels": {"kubernetes.io/hostname": n}},
                       "timestamp": SAMPLED, "window": "20.037s",
                       "usage": {"cpu": f"{cpu * 1000000}n", "memory": f"{mem * 1024}Ki"}}
                      for n, (cpu, mem) in USAGE.items()]}


def pod_metrics():
    return {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
            "items": [{"metadata": {"name": p, "namespace": "shop", "creationTimestamp": "2026-11-30T10:00:00Z",
                                    "labels": {"app": p.split("-")[0]}},
                       "timestamp": SAMPLED, "window": "18.6s",
                       "containers": [{"name": p.split("-")[0],
                                       "usage": {"cpu": f"{cpu * 1000000}n", "memory": f"{mem * 1024}Ki"}}]}
                      for p, (_, cpu, mem) in PODS.items()]}


cluster = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
           "items": [{"apiVersion": "v1", "kind": "Namespace",
                      "metadata": {"name": "shop", "labels": {"kubernetes.io/metadata.name": "shop"}}}]
           + [node(n) for n in USAGE] + [pod(p, n) for p, (n, _, _) in PODS.items()]}

out = HERE / "usage-metrics-server"
out.mkdir(parents=True, exist_ok=True)
# `kubectl get ... -o json > snapshot.json; kubectl get --raw .../nodes >> snapshot.json; ...`
(out / "snapshot.json").write_text("\n".join(json.dumps(d, indent=2) for d in (cluster, node_metrics(),
                                                                              pod_metrics())) + "\n")

prom = HERE / "usage-prometheus"
prom.mkdir(parents=True, exist_ok=True)
(prom / "snapshot.json").write_text(json.dumps(cluster, indent=2) + "\n")
answer = {"status": "success", "data": {"resultType": "vector", "result": [
    {"metric": {"instance": n}, "value": [NOW, str(round(cpu / 4000, 4))]} for n, (cpu, _) in USAGE.items()]}}
(prom / "prometheus-result.json").write_text(json.dumps(answer, indent=2) + "\n")
