"""Objects shared by the snapshot generators (test/testdata/*/gen_snapshot.py, examples/gen_*.py), as
`kubectl get -o json` prints them."""


def ready_node(name, created, cpu="4", memory="8Gi", pods="20"):
    """A Ready node whose capacity and allocatable are the same, labelled as kubelet labels it."""
    resources = {"cpu": cpu, "memory": memory, "pods": pods}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-{name}", "creationTimestamp": created,
                     "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
        "spec": {},
        "status": {"capacity": dict(resources), "allocatable": dict(resources),
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]},
    }
