"""Known deliberate differences between kdesched and upstream v0.36, and how to recognise them.

Each entry has a name (the name of kdesched's compat switch: `kdesched: {compat: {<name>:
upstream}}`, pkg/policy/compat.h), the plugins it can affect, where it is documented, and a
predicate on a minimized case. Classification of a difference:

0. upstream's own random tie: upstream gave several outcomes and kdesched's set is made of the
   same choices (every pod it evicts, some upstream run evicts; every pod all runs evict, it
   evicts; as many pods as some run). Not a difference of kdesched's.
1. with --switches: re-run kdesched once per applicable entry with that single switch set to
   upstream; the entry whose switch makes kdesched's set one of upstream's outcomes explains it.
   If kdesched rejects the `compat` block (a build without switches), fall back to 2.
2. predicates: the first entry whose predicate holds on the minimized case explains it.

A difference nothing explains is a failure.
"""

import collections
import itertools

import kube
import sides

AA = "RemovePodsViolatingInterPodAntiAffinity"
NA = "RemovePodsViolatingNodeAffinity"
TS = "RemovePodsViolatingTopologySpreadConstraint"
LNU = "LowNodeUtilization"
MIXED = "Mixed"
ANY = None


class Known:
    def __init__(self, name, plugins, kind, doc, what, predicate):
        self.name = name
        self.plugins = plugins
        self.kind = kind  # "documented" | "undocumented"
        self.doc = doc
        self.what = what
        self.predicate = predicate

    def applies_to(self, plugin):
        return self.plugins is ANY or not plugin or plugin == MIXED or plugin in self.plugins


class Ctx:
    """What a predicate sees: the case, the plugin and the nearest upstream outcome's diff."""

    def __init__(self, case, result, plugin):
        self.case = case
        self.plugin = plugin
        self.closest = result.get("closest") or {"extra": [], "missing": []}
        self.pods = kube.pods(case)
        self.nodes = kube.nodes(case)
        self.by_key = kube.pod_by_key(case)
        self.extra = [self.by_key[(ns, n)] for ns, n, _ in self.closest["extra"] if (ns, n) in self.by_key]
        self.missing = [self.by_key[(ns, n)] for ns, n, _ in self.closest["missing"] if (ns, n) in self.by_key]
        # The plugins the difference is about (a Mixed policy runs several).
        self.plugins = {pl for _, _, pl in self.closest["extra"] + self.closest["missing"]} or {plugin}
        self.node_fit = any(kube.node_fit(case["policy"], pl) for pl in self.plugins)
        self.refused = {(r["namespace"], r["name"]): r for r in result["kdesched"].get("refused", [])}
        self.kd_evictions = result["kdesched"].get("evictions", [])


def violators_of(ctx, pod, term, include_terminating):
    """Pods in pod's topology domain (for term) that term selects, by upstream's namespace rule
    (the term's namespaces, else the pod's own)."""
    node_of = {n["metadata"]["name"]: n for n in ctx.nodes}
    mine = node_of.get(pod["spec"].get("nodeName"))
    if mine is None:
        return []
    key = term["topologyKey"]
    value = mine["metadata"].get("labels", {}).get(key)
    namespaces = term.get("namespaces") or [pod["metadata"]["namespace"]]
    out = []
    for other in ctx.pods:
        if other is pod or other["metadata"]["namespace"] not in namespaces:
            continue
        if kube.terminating(other) and not include_terminating:
            continue
        n = node_of.get(other["spec"].get("nodeName"))
        # The same node is the same domain even without the key (upstream's hasSameLabelValue).
        if n is None or (n is not mine and (value is None or n["metadata"].get("labels", {}).get(key) != value)):
            continue
        if kube.match_label_selector(term.get("labelSelector"), other["metadata"].get("labels", {})):
            out.append(other)
    return out


def terminating_violator_only(ctx):
    """upstream evicts a pod whose anti-affinity term is matched only by terminating pods."""
    for pod in ctx.missing:
        for term in kube.anti_affinity_terms(pod):
            every = violators_of(ctx, pod, term, True)
            live = violators_of(ctx, pod, term, False)
            if every and not live:
                return True
    return False


def same_name_other_namespace(ctx):
    names = [p["metadata"]["name"] for p in ctx.pods]
    return len(names) != len(set(names))


def zero_request_overcommitted(ctx):
    """kdesched evicts (or upstream refuses) a pod that requests 0 of a resource some node has
    already over-committed: upstream's fit compares 0 with a negative remainder."""
    if not ctx.node_fit:
        return False
    over = set()
    for n in ctx.nodes:
        rem = kube.node_remaining(ctx.case, n)
        over |= {r for r in ("cpu", "memory") if rem[r] < 0}
    for pod in ctx.extra:
        req = kube.requests(pod)
        if any(req[r] == 0 for r in over):
            return True
    return False


def term_selects(ctx, owner, term, pod):
    """Whether owner's anti-affinity term selects pod, namespaces as kube-scheduler reads them
    (namespaces, namespaceSelector, else the owner's namespace)."""
    if not kube.match_label_selector(term.get("labelSelector"), pod["metadata"].get("labels", {})):
        return False
    ns = pod["metadata"]["namespace"]
    names, nsel = term.get("namespaces") or [], term.get("namespaceSelector")
    if not names and nsel is None:
        return ns == owner["metadata"]["namespace"]
    if ns in names:
        return True
    if nsel is not None:
        labels = next((i["metadata"].get("labels", {}) for i in ctx.case["snapshot"]["items"]
                       if i["kind"] == "Namespace" and i["metadata"]["name"] == ns), {})
        return kube.match_label_selector(nsel, labels)
    return False


def anti_affinity_both_ways(ctx):
    """NodeFit: a pod upstream moves (kdesched does not) is selected by the anti-affinity term of
    a pod running on another node, which upstream's fit (the moving pod's own terms only) misses."""
    if not ctx.node_fit:
        return False
    for pod in ctx.missing:
        for other in ctx.pods:
            if other["spec"].get("nodeName") == pod["spec"].get("nodeName") or kube.terminating(other):
                continue
            if any(term_selects(ctx, other, t, pod) for t in kube.anti_affinity_terms(other)):
                return True
    return False


def term_key(key):
    """A pod of the difference carries an anti-affinity term with this field."""
    return lambda ctx: any(key in t for p in ctx.missing + ctx.extra for t in kube.anti_affinity_terms(p))


def covering_constraints(ctx, pod):
    """The spread constraints (of any pod of its namespace) whose selector counts pod."""
    out = []
    for owner in ctx.pods:
        if owner["metadata"]["namespace"] != pod["metadata"]["namespace"]:
            continue
        for c in kube.spread_constraints(owner):
            if kube.match_label_selector(c.get("labelSelector"), pod["metadata"].get("labels", {})):
                out.append(c)
    return out


def spread_key(key):
    return lambda ctx: any(key in c for p in ctx.missing + ctx.extra for c in covering_constraints(ctx, p))


def several_constraints(ctx):
    return any(len(kube.spread_constraints(p)) > 1 for p in ctx.missing)


def fewer_with_fit(ctx):
    """Topology spread with NodeFit moves fewer pods than upstream, and what it leaves behind
    needs room (requests) that the earlier choices took."""
    if not ctx.node_fit or ctx.extra or not ctx.missing:
        return False
    return any(any(kube.requests(p).values()) for p in ctx.missing)


def evicted_earlier(ctx):
    """Pods kdesched evicted earlier in the cycle are gone for later decisions; upstream still
    sees them: it evicts the same pod again from a later plugin, counts it in LowNodeUtilization's
    usage, or finds no room for a pod that only fits once they are gone."""
    evicted = {(e["namespace"], e["name"]) for e in ctx.kd_evictions}
    by_plugin = {(e["namespace"], e["name"]): e.get("plugin") for e in ctx.kd_evictions}
    for ns, name, plugin in ctx.closest["missing"]:
        if (ns, name) in evicted and by_plugin[(ns, name)] != plugin:
            return True
    if LNU in ctx.plugins and any(e.get("plugin") not in (LNU, None) for e in ctx.kd_evictions):
        return True
    if not ctx.node_fit or not ctx.extra:
        return False
    for pod in ctx.extra:
        req = kube.requests(pod)
        for n in ctx.nodes:
            name = n["metadata"]["name"]
            if name == pod["spec"].get("nodeName"):
                continue
            rem = kube.node_remaining(ctx.case, n)
            freed = {"cpu": 0.0, "memory": 0.0, "pods": 0}
            for q in ctx.pods:
                if q["spec"].get("nodeName") == name and (q["metadata"]["namespace"], q["metadata"]["name"]) in evicted:
                    r = kube.requests(q)
                    freed["cpu"] += r["cpu"]
                    freed["memory"] += r["memory"]
                    freed["pods"] += 1
            if not freed["pods"]:
                continue
            short = [r for r in ("cpu", "memory") if req[r] > rem[r]] + (["pods"] if rem["pods"] < 1 else [])
            if short and all((req[r] if r != "pods" else 1) <= rem[r] + freed[r] for r in short):
                return True
    return False


def pdb_allows_unhealthy(pdb):
    st = pdb.get("status", {})
    return st.get("currentHealthy", 0) >= st.get("desiredHealthy", 0) > 0 or \
        pdb["spec"].get("unhealthyPodEvictionPolicy") == "AlwaysAllow"


def unready_pod_needs_budget(ctx):
    """A PDB refused (in kdesched) a pod upstream evicts, and an unready pod under the same PDB
    is involved: upstream's eviction of an unready pod passes the API server without budget
    (IfHealthyBudget: the PDB is healthy enough, or AlwaysAllow); kdesched makes it spend one."""
    pdbs = [i for i in ctx.case["snapshot"]["items"] if i["kind"] == "PodDisruptionBudget"]
    kd = {(e["namespace"], e["name"]) for e in ctx.kd_evictions}
    for pod in ctx.missing:
        r = ctx.refused.get((pod["metadata"]["namespace"], pod["metadata"]["name"]))
        if not r or "PodDisruptionBudget" not in (r.get("by") or ""):
            continue
        for pdb in pdbs:
            if pdb["metadata"].get("namespace") != pod["metadata"]["namespace"] or not pdb_allows_unhealthy(pdb):
                continue
            sel = pdb["spec"].get("selector")
            covered = [q for q in ctx.pods if q["metadata"]["namespace"] == pod["metadata"]["namespace"]
                       and kube.match_label_selector(sel, q["metadata"].get("labels", {}))]
            if pod not in covered:
                continue
            if not kube.ready(pod) or any(not kube.ready(q) and (q["metadata"]["namespace"], q["metadata"]["name"]) in kd
                                          for q in covered):
                return True
    return False


def pods_without_pdb_protection(ctx):
    """DefaultEvictor's PodsWithoutPDB protection is on and kdesched evicts a pod a PDB covers:
    upstream v0.36 reads a PDB informer it never started, so it protects every pod
    (kubernetes-sigs/descheduler#1882)."""
    ev = kube.evictor_args(ctx.case["policy"])
    on = ev.get("ignorePodsWithoutPDB") or "PodsWithoutPDB" in (ev.get("podProtections") or {}).get("extraEnabled", [])
    return bool(on and ctx.extra and not ctx.missing)


def terminating_candidate(ctx):
    """upstream evicts a pod that is already terminating: the evict annotation makes
    DefaultEvictor's Filter pass before its terminating check."""
    return any(kube.terminating(p) for p in ctx.missing)


RANDOM_TIE = "upstreamRandomTie"


# Plugins that pick among their candidates in informer (map) order, unsorted: which replica of an
# owner on a node goes is upstream's random choice.
UNRANKED = {"RemoveDuplicates"}


def replica_class(case):
    """(namespace, name, plugin) -> the class of pods upstream chooses among at random: for an
    unranked plugin, the pods of the same owner on the same node; otherwise the pod itself."""
    owner_node = {}
    for p in kube.pods(case) if case else []:
        refs = p["metadata"].get("ownerReferences") or []
        if refs:
            owner_node[(p["metadata"]["namespace"], p["metadata"]["name"])] = (refs[0].get("uid") or refs[0]["name"],
                                                                              p["spec"].get("nodeName"))

    def cls(e):
        ns, name, plugin = e
        if plugin in UNRANKED and (ns, name) in owner_node:
            return (ns, owner_node[(ns, name)], plugin)
        return e
    return cls


def upstream_random_tie(result, case=None):
    """Upstream decided this case differently from run to run, and kdesched's set is one more
    combination of the same choices (upstream's map order and unstable sorts pick among tied pods;
    48 runs need not show every combination). Given the case, a replica of the same owner on the
    same node stands for one upstream evicted, for the plugins that do not rank their candidates."""
    cls = replica_class(case)
    outs = [collections.Counter(map(cls, sides.evset(o["evictions"]))) for o in result["upstream"].get("outcomes", [])]
    if len(outs) < 2:
        return False
    mine = collections.Counter(map(cls, sides.evset(result["kdesched"]["evictions"])))
    union = set().union(*outs)
    common = set.intersection(*(set(o) for o in outs))
    return set(mine) <= union and common <= set(mine) and sum(mine.values()) in {sum(o.values()) for o in outs}


KNOWN = [
    Known("terminatingNotCandidate", {AA}, "documented", "docs/strategies.md: RemovePodsViolatingInterPodAntiAffinity",
          "a terminating pod is never a candidate, even with the descheduler.alpha.kubernetes.io/evict "
          "annotation; upstream's Filter passes such a pod and evicts it once more", terminating_candidate),
    Known("unreadyPodNeedsBudget", ANY, "documented", "docs/evictor.md",
          "an unready pod under a PDB needs budget like a ready one; the API server lets it go when the "
          "PDB is healthy enough (IfHealthyBudget) or unhealthyPodEvictionPolicy is AlwaysAllow",
          unready_pod_needs_budget),
    Known("podsWithoutPDBProtection", ANY, "documented", "docs/differences.md; upstream bug #1882",
          "PodsWithoutPDB protects only pods no PDB covers; upstream v0.36 never starts its PDB informer "
          "and protects every pod (no eviction at all)", pods_without_pdb_protection),
    Known("terminatingNotViolator", {AA}, "documented", "docs/strategies.md: RemovePodsViolatingInterPodAntiAffinity",
          "a terminating pod never counts as violating a running pod's anti-affinity; upstream counts it",
          terminating_violator_only),
    Known("namespaceSelectorHonoured", {AA}, "documented", "docs/strategies.md: RemovePodsViolatingInterPodAntiAffinity",
          "the term's namespaceSelector selects namespaces as kube-scheduler does; upstream ignores it",
          term_key("namespaceSelector")),
    Known("matchLabelKeysHonoured", {AA}, "documented", "docs/strategies.md: RemovePodsViolatingInterPodAntiAffinity",
          "the term's matchLabelKeys/mismatchLabelKeys narrow the selector; upstream ignores them",
          lambda ctx: term_key("matchLabelKeys")(ctx) or term_key("mismatchLabelKeys")(ctx)),
    Known("podIdentityNotName", {AA}, "documented", "docs/strategies.md: RemovePodsViolatingInterPodAntiAffinity",
          "pods are told apart by namespace and name; upstream compares names only",
          same_name_other_namespace),
    Known("zeroRequestSkipsResource", ANY, "documented", "docs/differences.md",
          "NodeFit skips a resource the pod does not request (as kube-scheduler); upstream compares 0 "
          "with the node's negative remainder and finds no fit", zero_request_overcommitted),
    Known("antiAffinityBothWays", ANY, "documented", "docs/strategies.md: DefaultEvictor",
          "NodeFit also rejects a node whose pods' anti-affinity terms select the pod; upstream checks "
          "only the pod's own terms", anti_affinity_both_ways),
    Known("minDomainsHonoured", {TS}, "documented", "docs/strategies/topology-spread.md difference 2",
          "minDomains counts missing domains as 0 like kube-scheduler; upstream ignores it",
          spread_key("minDomains")),
    Known("otherConstraintsRespected", {TS}, "documented", "docs/strategies/topology-spread.md difference 4",
          "a pod is not moved when that breaks another of its spread constraints", several_constraints),
    Known("movesSharedAcrossConstraints", {TS}, "documented", "docs/strategies/topology-spread.md difference 5",
          "a pod chosen for one constraint and headed into the domain a later constraint fills counts as that "
          "constraint's move first; upstream takes the later constraint's own highest-ranked pod",
          lambda ctx: several_constraints(ctx) and bool(ctx.missing)),
    Known("cumulativeFit", {TS}, "documented", "docs/strategies/topology-spread.md difference 3",
          "each chosen pod reserves room on its expected node; upstream checks every pod against the "
          "unchanged cluster", fewer_with_fit),
    Known("evictedEarlierNotCounted", ANY, "documented", "docs/strategies.md: DefaultEvictor; docs LNU",
          "pods evicted earlier in the cycle no longer use their node's resources", evicted_earlier),
]
KNOWN_BY_NAME = {k.name: k for k in KNOWN}


def combined_name(a, b):
    """The name of a difference two known ones explain together (classify.by_switches)."""
    return f"{a}+{b}"


def kind_of_name(name):
    """documented / undocumented for a known difference or a combination of two ("a+b": the
    weaker of both kinds), None for any other name."""
    kinds = [KNOWN_BY_NAME[n].kind if n in KNOWN_BY_NAME else None for n in name.split("+")]
    if None in kinds:
        return None
    return "undocumented" if "undocumented" in kinds else "documented"


class Classifier:
    def __init__(self, evaluator, try_switches=False):
        self.ev = evaluator
        self.try_switches = try_switches
        self.switches_supported = None  # unknown until the first probe
        self.missing_switches = set()  # known differences kdesched has no switch for

    def classify(self, case, result, plugin):
        candidates = [k for k in KNOWN if k.applies_to(plugin)]
        out = {"name": None, "by": None, "predicates": [], "switches": []}
        if upstream_random_tie(result, case):
            out["name"], out["by"] = RANDOM_TIE, "outcomes"
            return out
        if self.try_switches:
            explained = self.by_switches(case, result, candidates)
            if self.switches_supported:
                out["switches"] = explained
                if explained:
                    out["name"], out["by"] = explained[0], "switch"
                return out
        ctx = Ctx(case, result, plugin)
        for k in candidates:
            try:
                hit = k.predicate(ctx)
            except (KeyError, TypeError, IndexError):
                hit = False
            if hit:
                out["predicates"].append(k.name)
        if out["predicates"]:
            out["name"], out["by"] = out["predicates"][0], "predicate"
        return out

    def probe(self, case):
        """kdesched implements the switches when it rejects a switch set to a mode that does not
        exist (a build without them ignores or accepts the whole block)."""
        if self.switches_supported is None:
            self.switches_supported = switches_supported(self.ev, case)
        return self.switches_supported

    def by_switches(self, case, result, candidates):
        if not self.probe(case):
            return []
        upstream = [sides.evset(o["evictions"]) for o in result["upstream"]["outcomes"]]
        explained = []
        usable = []
        for k in candidates:
            r = self.ev.kdesched_only(case, {k.name: "upstream"})
            if r["error"]:
                self.missing_switches.add(k.name)
                continue
            usable.append(k.name)
            if sides.evset(r["evictions"]) in upstream:
                explained.append(k.name)
        if explained:
            return explained
        # Two known differences on the same pods, which no smaller case separates: a pod evicted
        # by PodLifeTime is evicted again by a later profile's plugin upstream only if both
        # evictedEarlierNotCounted and a PDB-budget difference are upstream's. Pairs only, and
        # only here: a case one switch explains never gets this far.
        for a, b in itertools.combinations(usable, 2):
            r = self.ev.kdesched_only(case, {a: "upstream", b: "upstream"})
            if not r["error"] and sides.evset(r["evictions"]) in upstream:
                return [combined_name(a, b)]
        return []


def switches_supported(evaluator, case, name=None):
    """Whether kdesched reads `kdesched: {compat: ...}`: it must refuse a mode that does not exist."""
    compat = {name: "no-such-mode"} if name else "no-such-mode"
    r = evaluator.kdesched_only(case, compat)
    return bool(r["error"]) and r["exit"] == 2 and "compat" in r["error"]
