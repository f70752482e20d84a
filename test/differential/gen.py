"""Seeded random clusters for the differential tester.

generate_cluster(seed, plugin) returns a snapshot (a `kubectl get -o json` v1 List of nodes,
pods, PDBs, namespaces and PriorityClasses) plus the features it used. The same (seed, plugin)
always gives the same cluster: every choice comes from one random.Random seeded with both.

Features are marked with the plugins whose decisions they drive (FEATURES). A run that targets
one plugin turns its features on with high probability and every other feature on with a lower
one, so interactions (a taint that nodeFit must see, a terminating pod that spread counts
ignore) still occur.
"""

import copy
import random

# Every timestamp in a generated snapshot is relative to this instant; the driver passes it to
# `kdesched plan --now` and to the harness (which shifts the snapshot to its own clock).
NOW = "2026-01-02T03:04:05Z"
NOW_EPOCH = 1767323045

AA = "RemovePodsViolatingInterPodAntiAffinity"
NA = "RemovePodsViolatingNodeAffinity"
TS = "RemovePodsViolatingTopologySpreadConstraint"
LNU = "LowNodeUtilization"
HNU = "HighNodeUtilization"
DUP = "RemoveDuplicates"
NT = "RemovePodsViolatingNodeTaints"
PLT = "PodLifeTime"
RFP = "RemoveFailedPods"
TMR = "RemovePodsHavingTooManyRestarts"
ALL = "*"
# A policy enabling every implemented plugin (one or two profiles), as upstream's chart does:
# later plugins see what earlier ones evicted.
MIXED = "Mixed"

# feature -> the plugins whose own decision it drives (ALL: every plugin, through DefaultEvictor,
# nodeFit or the node list).
FEATURES = {
    "zones": {AA, TS, NA},
    "nodeLabels": {NA, TS, AA},
    "nodeTaints": {NT, TS, LNU, HNU, NA},
    "cordon": {ALL},
    "notReadyNodes": {ALL},
    "requests": {LNU, HNU, ALL},
    "nodeSelector": {NA, TS},
    "requiredNodeAffinity": {NA, TS},
    "preferredNodeAffinity": {NA},
    "podAntiAffinity": {AA, ALL},
    "antiAffinityNamespaces": {AA},
    "topologySpread": {TS},
    "spreadPolicies": {TS},
    "tolerations": {NT, TS, LNU, HNU, NA},
    "protectedPods": {ALL},
    "terminatingPods": {ALL},
    "evictAnnotations": {ALL},
    "restarts": {TMR},
    "failedPods": {RFP, ALL},
    "podAges": {PLT, ALL},
    "podConditions": {PLT},
    "duplicates": {DUP},
    "pdbs": {ALL},
    "skewedPlacement": {LNU, HNU, TS, DUP},
    "sameNames": {AA},
}

PRIMARY_P = 0.85  # a feature of the targeted plugin
SHARED_P = 0.5  # a feature every plugin sees (ALL), when the targeted plugin is not listed
BACKGROUND_P = 0.25  # any other feature
BACKGROUND_W = 0.4  # how often a feature that is on but not the target's shows up

ZONES = ["zone-a", "zone-b", "zone-c"]
NODE_LABELS = {"disk": ["ssd", "hdd"], "tier": ["frontend", "backend", "batch"], "gpu": ["true"]}
TAINT_KEYS = {"dedicated": ["gpu", "infra"], "maintenance": ["true"], "spot": ["true"]}
NAMESPACES = {"default": {"env": "dev"}, "team-a": {"env": "prod", "team": "a"},
              "team-b": {"env": "prod", "team": "b"}}
APP_NAMES = ["web", "api", "cache", "db", "worker", "queue", "auth", "search", "report", "batch",
             "front", "store", "log", "mail", "pay"]
FAIL_REASONS = ["Error", "OOMKilled", "NodeAffinity", "Evicted", "CreateContainerConfigError"]
WAIT_REASONS = ["CrashLoopBackOff", "ImagePullBackOff", "ContainerCreating"]


def enabled_features(rng, plugin):
    """feature -> weight: 1 for a feature of the targeted plugin, BACKGROUND_W for the others."""
    out = {}
    for name, plugins in FEATURES.items():
        primary = plugin in plugins or plugins == {ALL} or plugin == MIXED
        p = PRIMARY_P if primary else SHARED_P if ALL in plugins else BACKGROUND_P
        if rng.random() < p:
            out[name] = 1.0 if primary else BACKGROUND_W
    return out


def chance(rng, feats, name, p):
    """Whether a feature shows up at this spot: probability p for the targeted plugin's own
    features, less for background ones, never for a feature off in this cluster."""
    w = feats.get(name)
    return w is not None and rng.random() < p * w


def ts(seconds_ago):
    import datetime
    t = datetime.datetime.fromtimestamp(NOW_EPOCH - int(seconds_ago), datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def quantity_cpu(m):
    return f"{m}m"


def quantity_mem(mi):
    return f"{mi}Mi"


def gen_nodes(rng, feats):
    n = rng.randint(3, 8)
    zones = ZONES[: rng.randint(1, 3)] if "zones" in feats else []
    nodes = []
    for i in range(n):
        name = f"node-{i + 1}"
        labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
        if zones and rng.random() > 0.08:
            labels["topology.kubernetes.io/zone"] = rng.choice(zones)
        if "nodeLabels" in feats:
            for key, values in NODE_LABELS.items():
                if rng.random() < 0.5:
                    labels[key] = rng.choice(values)
        spec = {}
        taints = []
        if chance(rng, feats, "nodeTaints", 0.3):
            for _ in range(rng.choice([1, 1, 2])):
                key = rng.choice(sorted(TAINT_KEYS))
                if any(t["key"] == key for t in taints):
                    continue
                effect = rng.choice(["NoSchedule", "NoSchedule", "NoExecute", "PreferNoSchedule"])
                taint = {"key": key, "effect": effect}
                if rng.random() < 0.8:
                    taint["value"] = rng.choice(TAINT_KEYS[key])
                taints.append(taint)
        if chance(rng, feats, "cordon", 0.15):
            spec["unschedulable"] = True
            taints.append({"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"})
        if taints:
            spec["taints"] = taints
        ready = not chance(rng, feats, "notReadyNodes", 0.08)
        cpu = rng.choice([2000, 4000, 4000, 8000])
        mem = rng.choice([4096, 8192, 8192, 16384])
        pods = rng.choice([10, 16, 32, 110])
        alloc = {"cpu": quantity_cpu(cpu), "memory": quantity_mem(mem), "pods": str(pods)}
        nodes.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"uid-node-{i + 1}", "labels": labels,
                         "creationTimestamp": ts(86400 * 60)},
            "spec": spec,
            "status": {"allocatable": alloc, "capacity": dict(alloc),
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
        })
    return nodes


def gen_namespaces():
    return [{"apiVersion": "v1", "kind": "Namespace",
             "metadata": {"name": ns, "uid": f"uid-ns-{ns}", "labels": dict(labels, **{"kubernetes.io/metadata.name": ns})}}
            for ns, labels in NAMESPACES.items()]


def gen_priority_classes():
    return [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "low", "uid": "uid-pc-low"}, "value": 100},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "high", "uid": "uid-pc-high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "system-cluster-critical", "uid": "uid-pc-scc"}, "value": 2000000000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "system-node-critical", "uid": "uid-pc-snc"}, "value": 2000001000},
    ]


def node_selector_expr(rng, nodes):
    """One matchExpressions entry over labels the nodes actually carry."""
    key = rng.choice(["disk", "disk", "tier", "tier", "gpu", "topology.kubernetes.io/zone", "topology.kubernetes.io/zone"]
                     + ["kubernetes.io/hostname"] * (rng.random() < 0.1))
    values = sorted({n["metadata"]["labels"][key] for n in nodes if key in n["metadata"]["labels"]})
    op = rng.choice(["In", "In", "In", "NotIn", "Exists", "DoesNotExist"])
    if op in ("In", "NotIn"):
        pool = values or ["ssd", "hdd"]
        return {"key": key, "operator": op, "values": sorted(rng.sample(pool, rng.randint(1, len(pool))))}
    return {"key": key, "operator": op}


def gen_node_affinity(rng, feats, nodes):
    aff = {}
    if chance(rng, feats, "requiredNodeAffinity", 0.45):
        terms = []
        for _ in range(rng.choice([1, 1, 2])):
            exprs = [node_selector_expr(rng, nodes) for _ in range(rng.choice([1, 1, 2]))]
            terms.append({"matchExpressions": exprs})
        if rng.random() < 0.05:
            terms.append({"matchFields": [{"key": "metadata.name", "operator": "In",
                                           "values": [rng.choice(nodes)["metadata"]["name"]]}]})
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if chance(rng, feats, "preferredNodeAffinity", 0.45):
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [node_selector_expr(rng, nodes)]}}
            for _ in range(rng.choice([1, 1, 2, 3]))]
    return aff


def gen_anti_affinity(rng, feats, app, apps):
    terms = []
    for _ in range(rng.choice([1, 1, 2])):
        target = app if rng.random() < 0.4 else rng.choice(apps)
        op = rng.random()
        if op < 0.75:
            sel = {"matchLabels": {"app": target}}
        elif op < 0.9:
            sel = {"matchExpressions": [{"key": "app", "operator": "In", "values": sorted({target, rng.choice(apps)})}]}
        else:
            sel = {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
        term = {"labelSelector": sel,
                "topologyKey": rng.choice(["kubernetes.io/hostname"] * 3 + ["topology.kubernetes.io/zone"])}
        if "antiAffinityNamespaces" in feats:
            r = rng.random()
            if r < 0.25:
                term["namespaces"] = sorted(rng.sample(sorted(NAMESPACES), rng.randint(1, 2)))
            elif r < 0.45:
                term["namespaceSelector"] = rng.choice([{}, {"matchLabels": {"env": "prod"}}, {"matchLabels": {"team": "a"}}])
            elif r < 0.55:
                term["matchLabelKeys"] = ["pod-template-hash"]
        terms.append(term)
    return {"requiredDuringSchedulingIgnoredDuringExecution": terms}


def merge_label_keys(rng, selector_holders, labels):
    """kube-apiserver (MatchLabelKeysInPodAffinity, MatchLabelKeysInPodTopologySpreadSelectorMerge,
    on by default since 1.33/1.34) adds `key In (pod's value)` to the labelSelector for each
    matchLabelKeys key when the pod is created. Most generated pods look like that; the rest
    look like pods created by an older API server."""
    for h in selector_holders:
        keys = [k for k in h.get("matchLabelKeys", []) if k in labels]
        if not keys or rng.random() < 0.2:
            continue
        sel = h.setdefault("labelSelector", {})
        sel.setdefault("matchExpressions", []).extend(
            {"key": k, "operator": "In", "values": [labels[k]]} for k in keys)


def gen_spread(rng, feats, app):
    out = []
    keys = ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    for key in rng.sample(keys, rng.choice([1, 1, 2])):
        c = {"maxSkew": rng.choice([1, 1, 1, 2, 3]), "topologyKey": key,
             "whenUnsatisfiable": rng.choice(["DoNotSchedule", "DoNotSchedule", "ScheduleAnyway"]),
             "labelSelector": {"matchLabels": {"app": app}}}
        if "spreadPolicies" in feats:
            if rng.random() < 0.2:
                c["nodeAffinityPolicy"] = rng.choice(["Honor", "Ignore"])
            if rng.random() < 0.2:
                c["nodeTaintsPolicy"] = rng.choice(["Honor", "Ignore"])
            if rng.random() < 0.15 and c["whenUnsatisfiable"] == "DoNotSchedule":
                c["minDomains"] = rng.randint(2, 4)
            if rng.random() < 0.2:
                c["matchLabelKeys"] = ["pod-template-hash"]
        out.append(c)
    return out


def gen_tolerations(rng, nodes):
    taints = [t for n in nodes for t in n["spec"].get("taints", []) if not t["key"].startswith("node.kubernetes.io")]
    if not taints:
        return []
    out = []
    for t in rng.sample(taints, min(len(taints), rng.choice([1, 1, 2]))):
        r = rng.random()
        if r < 0.3:
            out.append({"key": t["key"], "operator": "Exists"})
        elif r < 0.8 and "value" in t:
            out.append({"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]})
        else:
            out.append({"key": t["key"], "operator": "Exists", "effect": t["effect"]})
    if rng.random() < 0.03:
        out.append({"operator": "Exists"})
    return out


def gen_requests(rng, feats, kind):
    if "requests" not in feats or rng.random() < 0.12:
        return {}
    req = {}
    if rng.random() < 0.9:
        req["cpu"] = quantity_cpu(rng.choice([50, 100, 200, 250, 500, 750, 1000, 1500, 2000]))
    if rng.random() < 0.85:
        req["memory"] = quantity_mem(rng.choice([64, 128, 256, 512, 1024, 2048, 3072]))
    if req and rng.random() < 0.06:
        # An explicit zero (some charts write `cpu: 0`): the scheduler ignores it, a fit check
        # that compares it with a negative remainder does not.
        req[rng.choice(sorted(req))] = "0"
    return req


def gen_group(rng, feats, idx, nodes, apps):
    """A workload: its owner, template labels and scheduling spec, shared by its pods."""
    app = apps[idx]
    r = rng.random()
    kind = "ReplicaSet" if r < 0.8 else "StatefulSet" if r < 0.86 else "Job" if r < 0.89 else "bare" if r < 0.95 else "DaemonSet"
    ns = rng.choice(["default", "team-a", "team-a", "team-b"])
    tmpl_hash = f"{rng.randrange(16 ** 6):06x}"
    labels = {"app": app}
    if kind == "ReplicaSet":
        labels["pod-template-hash"] = tmpl_hash
    if rng.random() < 0.4:
        labels["tier"] = rng.choice(["frontend", "backend"])
    g = {"app": app, "kind": kind, "ns": ns, "hash": tmpl_hash, "labels": labels, "spec": {},
         "requests": gen_requests(rng, feats, kind), "guaranteed": rng.random() < 0.2}
    if kind == "DaemonSet":
        g["replicas"] = len(nodes)
        return g
    g["replicas"] = rng.choice([1, 2, 2, 3, 3, 4, 5, 6, 8])
    spec = g["spec"]
    if chance(rng, feats, "nodeSelector", 0.2):
        e = node_selector_expr(rng, nodes)
        if e["operator"] == "In":
            spec["nodeSelector"] = {e["key"]: e["values"][0]}
    aff = {}
    na = gen_node_affinity(rng, feats, nodes)
    if na:
        aff["nodeAffinity"] = na
    if chance(rng, feats, "podAntiAffinity", 0.5):
        aff["podAntiAffinity"] = gen_anti_affinity(rng, feats, app, apps)
    if aff:
        spec["affinity"] = aff
    if chance(rng, feats, "topologySpread", 0.7):
        spec["topologySpreadConstraints"] = gen_spread(rng, feats, app)
        g["replicas"] = max(g["replicas"], rng.randint(3, 8))
    merge_label_keys(rng, (aff.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution", []), labels)
    merge_label_keys(rng, spec.get("topologySpreadConstraints", []), labels)
    if chance(rng, feats, "tolerations", 0.4):
        tol = gen_tolerations(rng, nodes)
        if tol:
            spec["tolerations"] = tol
    return g


def owner_refs(g, pod_idx):
    kind = g["kind"]
    if kind == "bare":
        return None
    if kind == "ReplicaSet":
        name, api = f"{g['app']}-{g['hash']}", "apps/v1"
    elif kind == "Job":
        name, api = g["app"], "batch/v1"
    else:
        name, api = g["app"], "apps/v1"
    return [{"apiVersion": api, "kind": kind, "name": name, "uid": f"uid-{kind.lower()}-{g['ns']}-{name}",
             "controller": True, "blockOwnerDeletion": True}]


def pod_name(g, i, rng):
    if g["kind"] == "ReplicaSet":
        return f"{g['app']}-{g['hash']}-{rng.randrange(36 ** 5):05x}"
    if g["kind"] == "StatefulSet":
        return f"{g['app']}-{i}"
    if g["kind"] == "bare":
        return f"{g['app']}-bare-{i}"
    return f"{g['app']}-{rng.randrange(16 ** 5):05x}"


def container_status(rng, feats, name, age, phase, restarts):
    st = {"name": name, "ready": phase == "Running", "restartCount": restarts, "image": "registry/app:1",
          "imageID": "", "started": phase == "Running"}
    if phase == "Failed":
        st["state"] = {"terminated": {"exitCode": rng.choice([1, 1, 2, 137, 143]), "reason": rng.choice(FAIL_REASONS),
                                      "startedAt": ts(age - 1), "finishedAt": ts(max(age // 2, 1))}}
    elif phase == "Running" and restarts and rng.random() < 0.4:
        st["state"] = {"waiting": {"reason": rng.choice(WAIT_REASONS)}}
        st["ready"] = False
    else:
        st["state"] = {"running": {"startedAt": ts(age - 1)}}
    if restarts:
        st["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": ts(age - 2), "finishedAt": ts(age // 2 + 1)}}
    return st


def pod_age(rng, feats):
    if "podAges" in feats:
        return rng.choice([120, 600, 1800, 3600, 7200, 86400, 3 * 86400, 10 * 86400, 40 * 86400]) + rng.randint(0, 59)
    return 86400 * 2 + rng.randint(0, 3600)


def place(rng, feats, g, nodes, weights):
    if g["kind"] == "DaemonSet":
        return [n["metadata"]["name"] for n in nodes]
    names = [n["metadata"]["name"] for n in nodes]
    if chance(rng, feats, "duplicates", 0.4):
        chosen = rng.sample(names, min(len(names), rng.choice([1, 2])))
        return [rng.choice(chosen) for _ in range(g["replicas"])]
    return rng.choices(names, weights=weights, k=g["replicas"])


def make_pod(rng, feats, g, i, node, priority, extra):
    name = pod_name(g, i, rng)
    age = pod_age(rng, feats)
    meta = {"name": name, "namespace": g["ns"], "uid": f"uid-pod-{g['ns']}-{name}", "labels": dict(g["labels"]),
            "creationTimestamp": ts(age)}
    refs = owner_refs(g, i)
    if refs:
        meta["ownerReferences"] = refs
    if g["kind"] == "StatefulSet":
        meta["labels"]["statefulset.kubernetes.io/pod-name"] = name
    annotations = {}
    container = {"name": "app", "image": "registry/app:1"}
    req = dict(g["requests"])
    if req:
        container["resources"] = {"requests": req}
        if g["guaranteed"] and "cpu" in req and "memory" in req:
            container["resources"]["limits"] = dict(req)
    qos = "BestEffort" if not req else "Guaranteed" if "limits" in container.get("resources", {}) else "Burstable"
    spec = {"nodeName": node, "containers": [container], "priority": priority,
            "schedulerName": "default-scheduler", "restartPolicy": "Always"}
    spec.update({k: v for k, v in g["spec"].items()})
    phase, restarts, init_status = "Running", 0, None
    if g["kind"] != "DaemonSet" and chance(rng, feats, "failedPods", 0.12):
        phase = "Failed"
    if chance(rng, feats, "restarts", 0.45):
        restarts = rng.choice([1, 2, 3, 5, 8, 12, 20, 40])
    if phase == "Running" and chance(rng, feats, "podConditions", 0.1):
        phase = "Pending"
    if extra.get("initContainers"):
        spec["initContainers"] = [{"name": "init", "image": "registry/init:1"}]
        init_restarts = rng.choice([0, 0, 2, 6, 15]) if "restarts" in feats else 0
        init_status = {"name": "init", "ready": False, "restartCount": init_restarts, "image": "registry/init:1", "imageID": ""}
        if phase == "Failed" and rng.random() < 0.5:
            init_status["state"] = {"terminated": {"exitCode": rng.choice([1, 3]), "reason": rng.choice(FAIL_REASONS),
                                                   "startedAt": ts(age - 1), "finishedAt": ts(age - 2)}}
        else:
            init_status["state"] = {"terminated": {"exitCode": 0, "reason": "Completed",
                                                   "startedAt": ts(age - 1), "finishedAt": ts(age - 2)}}
    for key in ("volumes",):
        if key in extra:
            spec[key] = extra[key]
    if extra.get("critical"):
        spec["priorityClassName"] = extra["critical"]
    if extra.get("mirror"):
        annotations["kubernetes.io/config.mirror"] = "mirror-hash"
        annotations["kubernetes.io/config.source"] = "file"
    if chance(rng, feats, "evictAnnotations", 0.1):
        r = rng.random()
        if r < 0.5:
            annotations["descheduler.alpha.kubernetes.io/evict"] = "true"
        else:
            annotations["descheduler.alpha.kubernetes.io/prefer-no-eviction"] = ""
    if annotations:
        meta["annotations"] = annotations
    if chance(rng, feats, "terminatingPods", 0.08):
        meta["deletionTimestamp"] = ts(20)
        meta["deletionGracePeriodSeconds"] = 30
    ready = phase == "Running"
    cstat = container_status(rng, feats, "app", age, phase, restarts)
    if cstat["state"].get("waiting"):
        ready = False
    conditions = [
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": ts(age)},
        {"type": "Ready", "status": "True" if ready else "False",
         "lastTransitionTime": ts(age - 5 if ready else rng.choice([30, 400, 4000]))},
    ]
    if phase == "Pending":
        cstat = {"name": "app", "ready": False, "restartCount": 0, "image": "registry/app:1", "imageID": "",
                 "state": {"waiting": {"reason": rng.choice(WAIT_REASONS)}}}
    status = {"phase": phase, "conditions": conditions, "startTime": ts(age - 1), "qosClass": qos,
              "containerStatuses": [cstat], "hostIP": "10.0.0.1", "podIP": "10.1.0.1"}
    if init_status:
        status["initContainerStatuses"] = [init_status]
    if phase == "Failed" and rng.random() < 0.3:
        status["reason"] = rng.choice(["Evicted", "NodeAffinity", "Shutdown"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def pod_extras(rng, feats, g, nodes):
    extra = {}
    if chance(rng, feats, "protectedPods", 0.12):
        r = rng.random()
        if r < 0.4:
            extra["volumes"] = [{"name": "scratch", "emptyDir": {}}]
        elif r < 0.7:
            extra["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": f"{g['app']}-data"}}]
        elif r < 0.9:
            extra["critical"] = rng.choice(["system-cluster-critical", "system-node-critical"])
        elif g["kind"] == "bare":
            extra["mirror"] = True
    if (chance(rng, feats, "restarts", 0.2) or chance(rng, feats, "failedPods", 0.2)):
        extra["initContainers"] = True
    return extra


def gen_pdb(rng, g, pods):
    matching = [p for p in pods if p["metadata"]["namespace"] == g["ns"] and p["metadata"]["labels"].get("app") == g["app"]]
    expected = len(matching)
    healthy = sum(1 for p in matching if p["status"]["phase"] == "Running"
                  and "deletionTimestamp" not in p["metadata"]
                  and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"]["conditions"]))
    spec = {"selector": {"matchLabels": {"app": g["app"]}}}
    if rng.random() < 0.5:
        k = rng.randint(0, max(expected - 1, 0))
        spec["minAvailable"] = k
        desired = k
    else:
        u = rng.randint(0, 2)
        spec["maxUnavailable"] = u
        desired = max(expected - u, 0)
    generation = 2 if rng.random() < 0.1 else 1
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": g["app"], "namespace": g["ns"], "uid": f"uid-pdb-{g['ns']}-{g['app']}", "generation": generation},
            "spec": spec,
            "status": {"observedGeneration": 1, "expectedPods": expected, "currentHealthy": healthy,
                       "desiredHealthy": desired, "disruptionsAllowed": max(healthy - desired, 0)}}


def gen_pvcs(pods):
    seen, out = set(), []
    for p in pods:
        for v in p["spec"].get("volumes", []):
            claim = v.get("persistentVolumeClaim", {}).get("claimName")
            key = (p["metadata"]["namespace"], claim)
            if claim and key not in seen:
                seen.add(key)
                out.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                            "metadata": {"name": claim, "namespace": key[0], "uid": f"uid-pvc-{key[0]}-{claim}"},
                            "spec": {"storageClassName": "standard", "accessModes": ["ReadWriteOnce"],
                                     "resources": {"requests": {"storage": "1Gi"}}},
                            "status": {"phase": "Bound"}})
    return out


def same_named_copies(rng, pods, nodes):
    """Pods named like a pod of another namespace (StatefulSets of the same name do that): a
    descheduler must tell them apart by namespace, not by name."""
    out = []
    used = {q["spec"]["priority"] for q in pods}
    for p in rng.sample(pods, min(len(pods), rng.randint(1, 3))):
        c = copy.deepcopy(p)
        m = c["metadata"]
        m["namespace"] = rng.choice([ns for ns in NAMESPACES if ns != m["namespace"]])
        m["uid"] = f"uid-pod-{m['namespace']}-{m['name']}"
        for ref in m.get("ownerReferences", []):
            ref["uid"] = f"uid-{ref['kind'].lower()}-{m['namespace']}-{ref['name']}"
        c["spec"]["nodeName"] = rng.choice(nodes)["metadata"]["name"]
        prio = p["spec"]["priority"] + 100000
        while prio in used:
            prio += 1
        used.add(prio)
        c["spec"]["priority"] = prio
        out.append(c)
    return out


def generate_cluster(seed, plugin):
    """Returns (snapshot List, features). Deterministic in (seed, plugin)."""
    rng = random.Random(f"{plugin}:{seed}")
    feats = enabled_features(rng, plugin)
    nodes = gen_nodes(rng, feats)
    weights = [rng.choice([1, 1, 2, 5, 10]) for _ in nodes] if "skewedPlacement" in feats else [1] * len(nodes)
    target = rng.randint(10, 60)
    apps = list(APP_NAMES)
    rng.shuffle(apps)
    groups, pods = [], []
    while sum(min(g["replicas"], 8) for g in groups) < target and len(groups) < len(apps):
        groups.append(gen_group(rng, feats, len(groups), nodes, apps))
    critical_base = 2000000000
    priorities = rng.sample(range(0, 100000), 200)
    for g in groups:
        for i, node in enumerate(place(rng, feats, g, nodes, weights)):
            if len(pods) >= 60:
                break
            extra = pod_extras(rng, feats, g, nodes)
            prio = priorities[len(pods)]
            if extra.get("critical"):
                prio = critical_base + len(pods) + (1000 if extra["critical"] == "system-node-critical" else 0)
            pods.append(make_pod(rng, feats, g, i, node, prio, extra))
    if pods and chance(rng, feats, "sameNames", 0.8):
        pods += same_named_copies(rng, pods, nodes)
    pdbs = []
    if "pdbs" in feats:
        for g in groups:
            if g["kind"] in ("ReplicaSet", "StatefulSet") and rng.random() < 0.25:
                pdbs.append(gen_pdb(rng, g, pods))
    items = nodes + gen_namespaces() + gen_priority_classes() + pods + pdbs + gen_pvcs(pods)
    return {"apiVersion": "v1", "kind": "List", "items": items}, sorted(feats)
