"""Seeded random DeschedulerPolicies, one generator per plugin.

generate_policy(seed, plugin) returns (policy, variant): a descheduler/v1alpha2 policy with one
profile enabling `plugin` with random args, random DefaultEvictor args and sometimes the global
limits and nodeSelector. `variant` is a short label of the args that change the algorithm (e.g.
the node affinity type), so rates can be reported per variant.

Adding a plugin is one function `args_<plugin>(rng) -> (args or None, variant)` registered in
PLUGINS with its extension point. gen.MIXED enables every implemented plugin at once.
"""

import random

import gen

NAMESPACE_NAMES = sorted(gen.NAMESPACES)


def maybe_namespaces(rng, p=0.2):
    if rng.random() >= p:
        return None
    names = sorted(rng.sample(NAMESPACE_NAMES, rng.randint(1, 2)))
    return {rng.choice(["include", "exclude"]): names}


def maybe_label_selector(rng, p=0.12):
    if rng.random() >= p:
        return None
    return rng.choice([
        {"matchLabels": {"tier": "frontend"}},
        {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["backend"]}]},
        {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web", "api"]}]},
        {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
    ])


def with_common(args, rng, label_selector=True):
    ns = maybe_namespaces(rng)
    if ns:
        args["namespaces"] = ns
    if label_selector:
        sel = maybe_label_selector(rng)
        if sel:
            args["labelSelector"] = sel
    return args


def args_anti_affinity(rng):
    return with_common({}, rng), "required"


def args_node_affinity(rng):
    r = rng.random()
    req, pref = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
    types = [req] if r < 0.45 else [pref] if r < 0.9 else [req, pref]
    variant = "+".join("required" if t == req else "preferred" for t in types)
    return with_common({"nodeAffinityType": types}, rng), variant


def args_topology_spread(rng):
    args = {}
    r = rng.random()
    if r < 0.3:
        args["constraints"] = ["DoNotSchedule"]
    elif r < 0.45:
        args["constraints"] = ["ScheduleAnyway"]
    elif r < 0.65:
        args["constraints"] = ["DoNotSchedule", "ScheduleAnyway"]
    if rng.random() < 0.25:
        args["topologyBalanceNodeFit"] = False
    variant = "constraints=" + ",".join(args.get("constraints", ["default"]))
    if args.get("topologyBalanceNodeFit") is False:
        variant += " nodeFit=false"
    return with_common(args, rng), variant


def thresholds(rng, resources, low, high):
    return {r: rng.choice(range(low, high + 1, 5)) for r in resources}


def usage_percent(snapshot):
    """Per resource, the sorted request percentages of the cluster's nodes (what LowNodeUtilization
    classifies), so thresholds can be drawn where they split the nodes."""
    import kube
    case = {"snapshot": snapshot}
    out = {"cpu": [], "memory": [], "pods": []}
    for n in kube.nodes(case):
        alloc = n["status"]["allocatable"]
        rem = kube.node_remaining(case, n)
        cap = {"cpu": kube.quantity(alloc["cpu"], milli=True), "memory": kube.quantity(alloc["memory"]),
               "pods": kube.quantity(alloc["pods"])}
        for r in out:
            out[r].append(100.0 * (cap[r] - rem[r]) / cap[r] if cap[r] else 0.0)
    return {r: sorted(v) for r, v in out.items()}


def split_thresholds(rng, resources, usage):
    """thresholds just above the least used nodes, targets just below the most used ones."""
    low, high = {}, {}
    for r in resources:
        u = usage[r]
        lo = min(100, max(0, int(u[0]) + rng.choice([1, 3, 5, 10])))
        hi = max(lo, min(100, int(u[-1]) - rng.choice([1, 3, 5, 10])))
        low[r], high[r] = lo, hi
    return low, high


def args_low_node_utilization(rng, snapshot=None):
    resources = rng.choice([["cpu", "memory", "pods"], ["cpu", "memory"], ["cpu"], ["memory"], ["pods"], ["cpu", "pods"]])
    deviation = rng.random() < 0.2
    if deviation:
        low = thresholds(rng, resources, 5, 30)
        high = thresholds(rng, resources, 5, 30)
    elif snapshot is not None and rng.random() < 0.7:
        low, high = split_thresholds(rng, resources, usage_percent(snapshot))
    else:
        low = thresholds(rng, resources, 5, 50)
        high = {r: min(100, low[r] + rng.choice(range(0, 55, 5))) for r in resources}
    args = {"thresholds": low, "targetThresholds": high}
    if deviation:
        args["useDeviationThresholds"] = True
    if rng.random() < 0.1:
        args["numberOfNodes"] = rng.randint(1, 3)
    if rng.random() < 0.12:
        args["evictableNamespaces"] = {"exclude": sorted(rng.sample(NAMESPACE_NAMES, 1))}
    if rng.random() < 0.12:
        args["evictionLimits"] = {"node": rng.randint(1, 3)}
    return args, "deviation" if deviation else "thresholds"


def args_high_node_utilization(rng, snapshot=None):
    resources = rng.choice([["cpu", "memory"], ["cpu"], ["memory"], ["cpu", "memory", "pods"]])
    args = {"thresholds": thresholds(rng, resources, 10, 60)}
    if snapshot is not None and rng.random() < 0.6:
        args["thresholds"] = split_thresholds(rng, resources, usage_percent(snapshot))[0]
    if rng.random() < 0.1:
        args["numberOfNodes"] = rng.randint(1, 2)
    if rng.random() < 0.12:
        args["evictableNamespaces"] = {"exclude": sorted(rng.sample(NAMESPACE_NAMES, 1))}
    if rng.random() < 0.2:
        args["evictionModes"] = ["OnlyThresholdingResources"]
    return args, "thresholds"


def args_remove_duplicates(rng):
    args = with_common({}, rng, label_selector=False)
    if rng.random() < 0.2:
        args["excludeOwnerKinds"] = rng.sample(["ReplicaSet", "StatefulSet", "Job"], 1)
    return args, "default"


def args_node_taints(rng):
    args = with_common({}, rng)
    if rng.random() < 0.3:
        args["includePreferNoSchedule"] = True
    r = rng.random()
    if r < 0.15:
        args["excludedTaints"] = [rng.choice(["dedicated", "spot=true", "maintenance"])]
    elif r < 0.3:
        args["includedTaints"] = [rng.choice(["dedicated=gpu", "spot", "maintenance=true"])]
    return args, "preferNoSchedule" if args.get("includePreferNoSchedule") else "default"


def args_pod_life_time(rng):
    args = with_common({}, rng)
    r = rng.random()
    if r < 0.7:
        args["maxPodLifeTimeSeconds"] = rng.choice([300, 3600, 86400, 7 * 86400])
    if r > 0.5:
        args["states"] = rng.sample(["Running", "Pending", "CrashLoopBackOff", "ContainerCreating", "Failed", "OOMKilled"], rng.randint(1, 2))
    if rng.random() < 0.1:
        args["conditions"] = [{"type": "Ready", "status": "False", "minTimeSinceLastTransitionSeconds": 300}]
    if rng.random() < 0.1:
        args["ownerKinds"] = {rng.choice(["include", "exclude"]): ["ReplicaSet"]}
    return args, "states" if "states" in args else "age"


def args_remove_failed_pods(rng):
    args = with_common({}, rng)
    if rng.random() < 0.3:
        args["reasons"] = rng.sample(gen.FAIL_REASONS, rng.randint(1, 2))
    if rng.random() < 0.2:
        args["exitCodes"] = rng.sample([1, 2, 137, 143], rng.randint(1, 2))
    if rng.random() < 0.3:
        args["minPodLifetimeSeconds"] = rng.choice([60, 3600, 86400])
    if rng.random() < 0.15:
        args["excludeOwnerKinds"] = ["Job"]
    if rng.random() < 0.3:
        args["includingInitContainers"] = True
    return args, "default"


def args_too_many_restarts(rng):
    args = with_common({"podRestartThreshold": rng.choice([1, 3, 5, 10, 20])}, rng)
    if rng.random() < 0.3:
        args["includingInitContainers"] = True
    if rng.random() < 0.3:
        args["states"] = rng.sample(["Running", "CrashLoopBackOff"], rng.randint(1, 2))
    return args, "default"


# plugin -> (extension point, args generator, implemented by kdesched today)
PLUGINS = {
    gen.AA: ("deschedule", args_anti_affinity),
    gen.NA: ("deschedule", args_node_affinity),
    gen.TS: ("balance", args_topology_spread),
    gen.LNU: ("balance", args_low_node_utilization),
    gen.HNU: ("balance", args_high_node_utilization),
    gen.DUP: ("balance", args_remove_duplicates),
    gen.NT: ("deschedule", args_node_taints),
    gen.PLT: ("deschedule", args_pod_life_time),
    gen.RFP: ("deschedule", args_remove_failed_pods),
    gen.TMR: ("deschedule", args_too_many_restarts),
}
# Every plugin kdesched implements (all of upstream v0.36's); UPCOMING would list plugins the
# harness runs but kdesched does not have yet (reported NOT_IMPLEMENTED).
EXISTING = [gen.AA, gen.NA, gen.TS, gen.LNU, gen.DUP, gen.NT, gen.HNU, gen.PLT, gen.RFP, gen.TMR]
UPCOMING = []


def evictor_args(rng):
    """DefaultEvictor args: each knob upstream has, each on with a small probability."""
    a = {}
    if rng.random() < 0.5:
        a["nodeFit"] = True
    r = rng.random()
    if r < 0.12:
        a["priorityThreshold"] = {"value": rng.choice([5000, 20000, 50000, 90000])}
    elif r < 0.16:
        a["priorityThreshold"] = {"name": rng.choice(["low", "high"])}
    if rng.random() < 0.06:
        a["labelSelector"] = maybe_label_selector(rng, 1.0)
    if rng.random() < 0.06:
        a["namespaceLabelSelector"] = rng.choice([{"matchLabels": {"env": "prod"}}, {"matchLabels": {"team": "b"}}])
    if rng.random() < 0.08:
        a["minReplicas"] = rng.randint(2, 4)
    if rng.random() < 0.08:
        a["minPodAge"] = rng.choice(["10m", "1h", "48h"])
    if rng.random() < 0.05:
        a["noEvictionPolicy"] = rng.choice(["Preferred", "Mandatory"])
    r = rng.random()
    if r < 0.12:
        prot = {}
        if rng.random() < 0.7:
            prot["defaultDisabled"] = rng.sample(["PodsWithLocalStorage", "SystemCriticalPods", "FailedBarePods", "DaemonSetPods"], rng.randint(1, 2))
        if rng.random() < 0.5:
            prot["extraEnabled"] = rng.sample(["PodsWithPVC", "PodsWithoutPDB"], 1)
        if prot:
            a["podProtections"] = prot
    elif r < 0.2:
        for key in ("evictLocalStoragePods", "evictSystemCriticalPods", "evictDaemonSetPods", "evictFailedBarePods", "ignorePvcPods"):
            if rng.random() < 0.3:
                a[key] = True
    return a


def generate_mixed(rng, snapshot):
    """Every implemented plugin, in one profile or split over two, each profile with its own
    DefaultEvictor args: deschedule plugins of all profiles run before balance plugins."""
    profiles = [{"name": "p", "pluginConfig": [], "plugins": {}}]
    if rng.random() < 0.4:
        profiles.append({"name": "q", "pluginConfig": [], "plugins": {}})
    for plugin in EXISTING:
        prof = rng.choice(profiles)
        ext, fn = PLUGINS[plugin]
        args, _ = fn(rng, snapshot) if plugin in (gen.LNU, gen.HNU) else fn(rng)
        entry = {"name": plugin}
        if args:
            entry["args"] = args
        prof["pluginConfig"].append(entry)
        prof["plugins"].setdefault(ext, {"enabled": []})["enabled"].append(plugin)
    profiles = [p for p in profiles if p["pluginConfig"]]
    for prof in profiles:
        ev = evictor_args(rng)
        if ev:
            prof["pluginConfig"].insert(0, {"name": "DefaultEvictor", "args": ev})
    return profiles, f"{len(profiles)} profile(s)"


def generate_policy(seed, plugin, snapshot=None):
    """The snapshot lets a generator aim its args at the cluster (utilization thresholds that
    split the nodes); the result stays a function of (seed, plugin, snapshot)."""
    rng = random.Random(f"policy:{plugin}:{seed}")
    if plugin == gen.MIXED:
        profiles, variant = generate_mixed(rng, snapshot)
        return with_limits(rng, {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
                                 "profiles": profiles}), variant
    ext, fn = PLUGINS[plugin]
    args, variant = fn(rng, snapshot) if plugin in (gen.LNU, gen.HNU) else fn(rng)
    ev = evictor_args(rng)
    configs = [{"name": "DefaultEvictor", "args": ev}] if ev or rng.random() < 0.5 else []
    entry = {"name": plugin}
    if args:
        entry["args"] = args
    configs.append(entry)
    policy = {"apiVersion": "descheduler/v1alpha2", "kind": "DeschedulerPolicy",
              "profiles": [{"name": "p", "pluginConfig": configs, "plugins": {ext: {"enabled": [plugin]}}}]}
    return with_limits(rng, policy), variant


def with_limits(rng, policy):
    if rng.random() < 0.1:
        policy["maxNoOfPodsToEvictPerNode"] = rng.randint(0, 2)
    if rng.random() < 0.07:
        policy["maxNoOfPodsToEvictPerNamespace"] = rng.randint(1, 3)
    if rng.random() < 0.07:
        policy["maxNoOfPodsToEvictTotal"] = rng.randint(1, 4)
    if rng.random() < 0.06:
        policy["nodeSelector"] = rng.choice(["disk=ssd", "tier!=batch", "gpu notin (true)"])
    return policy
