#include "pkg/trigger/affected.h"

#include "pkg/api/scheduling.h"

#include <map>

namespace kdesched::trigger {
namespace {

bool sameLabels(const api::Labels& a, const api::Labels& b) { return a == b; }

bool taintsEqual(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) { return a == b; }

PodSeed seedOf(const api::Pod& p) {
  return {p.ns, p.name, p.labels, p.nodeName, p.constraints().hasRequiredAntiAffinity()};
}

std::int64_t restarts(const api::Pod& p) {
  std::int64_t n = 0;
  for (const api::ContainerStatus& c : p.status().containers) n += c.restartCount;
  return n;
}

// What a bound pod's status change means to the status plugins; "" when nothing they read changed.
std::string statusChange(const api::Pod& before, const api::Pod& now) {
  if (now.phase == api::PodPhase::Failed && before.phase != api::PodPhase::Failed) return "pod-failed";
  if (restarts(now) > restarts(before)) return "pod-restarted";
  // Ready is compared apart: the cache may keep no conditions (Store::keepPodConditions).
  if (before.phase != now.phase || before.ready != now.ready || !(before.status() == now.status())) return "pod-status";
  return "";
}

}  // namespace

std::string addSeed(const cluster::StoreEvent& event, Seeds& seeds, const Interest& interest) {
  if (auto* c = std::get_if<cluster::Change<api::Pod>>(&event)) {
    if (c->type == cluster::EventType::Deleted) {
      seeds.balance = true;
      return "pod-deleted";
    }
    const api::Pod& now = *c->after;
    if (interest.podStatus && c->before && !now.nodeName.empty() && c->before->nodeName == now.nodeName &&
        !now.isTerminating()) {
      std::string kind = statusChange(*c->before, now);
      if (!kind.empty()) {
        PodSeed seed = seedOf(now);
        seed.placement = !sameLabels(c->before->labels, now.labels) && !now.isTerminal();
        seed.status = true;
        seeds.pods.push_back(std::move(seed));
        return kind;
      }
    }
    if (now.nodeName.empty() || now.isTerminal() || now.isTerminating()) {
      // A pod starting to terminate frees its node: imbalance may follow, violations cannot.
      if (c->before && !c->before->isTerminating() && now.isTerminating()) {
        seeds.balance = true;
        return "pod-terminating";
      }
      return "";
    }
    bool bound = !c->before || c->before->nodeName != now.nodeName;
    bool relabelled = c->before && !sameLabels(c->before->labels, now.labels);
    if (!bound && !relabelled) return "";
    seeds.pods.push_back(seedOf(now));
    return bound ? "pod-bound" : "pod-relabelled";
  }
  if (auto* c = std::get_if<cluster::Change<api::Node>>(&event)) {
    if (c->type == cluster::EventType::Added) {
      seeds.balance = true;
      return "node-added";
    }
    if (c->type == cluster::EventType::Deleted) return "";
    const api::Node& b = *c->before;
    const api::Node& a = *c->after;
    bool changed =
        !sameLabels(a.labels, b.labels) || !taintsEqual(a.taints, b.taints) || a.unschedulable != b.unschedulable;
    if (b.isReady() != a.isReady()) {
      seeds.balance = true;
      return "node-readiness";
    }
    if (!changed) return "";
    seeds.nodes.push_back({a.name, !taintsEqual(a.taints, b.taints)});
    return "node-changed";
  }
  return "";
}

namespace {

// Carriers of required anti-affinity terms, grouped by their shared constraints block and
// namespace: whether a term selects a pod depends only on those (unless the term uses
// matchLabelKeys/mismatchLabelKeys, which read the carrier's own labels), so each group's terms
// are matched once per seed, and only the matching groups are walked for topology domains.
struct CarrierGroup {
  const api::Pod* first = nullptr;
  bool perPod = false;  // the terms read the carrier's labels: match per carrier
  std::vector<const api::Pod*> pods;
};
using CarrierGroups = std::map<std::pair<const api::SchedulingConstraints*, std::string_view>, CarrierGroup>;

CarrierGroups carrierGroups(const cluster::Snapshot& snapshot) {
  CarrierGroups groups;
  snapshot.forEachAntiAffinityCarriers([&groups](cluster::Snapshot::Pods carriers) {
    for (const api::Pod* p : carriers) {
      if (p->nodeName.empty() || p->isTerminal() || p->isTerminating()) continue;
      auto& g = groups[{&p->constraints(), p->ns.view()}];
      if (!g.first) {
        g.first = p;
        for (const auto& t : p->constraints().podAntiAffinity->required)
          if (!t.matchLabelKeys.empty() || !t.mismatchLabelKeys.empty()) g.perPod = true;
      }
      g.pods.push_back(p);
    }
  });
  return groups;
}

bool sameDomain(const api::Node& a, const api::Node& b, const std::string& topologyKey) {
  if (&a == &b) return true;
  auto da = a.labels.get(topologyKey);
  auto db = b.labels.get(topologyKey);
  return da && db && *da == *db;
}

// Carriers whose term selects `live` and whose node shares the term's domain with `liveNode`.
void addCarriersSelecting(const cluster::Snapshot& snapshot, const CarrierGroups& groups, const api::Pod& live,
                          const api::Node& liveNode, const api::NamespaceLabelsFn& nsLabels, Scope& scope) {
  for (const auto& [id, g] : groups) {
    for (const auto& term : id.first->podAntiAffinity->required) {
      if (!g.perPod && !api::podAffinityTermMatches(term, *g.first, live, nsLabels)) continue;
      for (const api::Pod* carrier : g.pods) {
        if (carrier == &live) continue;
        if (g.perPod && !api::podAffinityTermMatches(term, *carrier, live, nsLabels)) continue;
        const api::Node* carrierNode = snapshot.node(carrier->nodeName);
        if (!carrierNode || !sameDomain(*carrierNode, liveNode, term.topologyKey)) continue;
        scope.pods.insert(api::PodName::of(*carrier));
        scope.plugins.insert(kAntiAffinityPlugin);
      }
    }
  }
}

// Some spread constraint in the pod's namespace counts it: its domains changed size.
bool countedBySpread(const cluster::Snapshot& snapshot, const api::Pod& live) {
  std::unordered_set<const api::SchedulingConstraints*> checked;
  for (const api::Pod* p : snapshot.podsInNamespace(live.ns)) {
    if (!checked.insert(&p->constraints()).second) continue;
    for (const auto& c : p->constraints().topologySpreadConstraints)
      if (c.labelSelector && c.labelSelector->matches(live.labels)) return true;
  }
  return false;
}

// Another live pod of the same controller runs on the same node: a duplicate (RemoveDuplicates).
bool besideSibling(const cluster::Snapshot& snapshot, const api::Pod& live) {
  const api::OwnerReference* o = live.controllerRef();
  if (!o) return false;
  for (const api::Pod* sibling : snapshot.podsOfOwner(o->uid))
    if (sibling != &live && sibling->nodeName == live.nodeName && !sibling->isTerminal() && !sibling->isTerminating())
      return true;
  return false;
}

void addPodSeeds(const cluster::Snapshot& snapshot, const std::vector<PodSeed>& seeds, Scope& scope) {
  if (seeds.empty()) return;
  const api::NamespaceLabelsFn nsLabels = [&snapshot](const api::Symbol& ns) -> const api::Labels* {
    const api::Namespace* n = snapshot.namespaceByName(ns.view());
    return n ? &n->labels : nullptr;
  };
  const CarrierGroups groups = carrierGroups(snapshot);
  for (const PodSeed& seed : seeds) {
    const api::Node* seedNode = snapshot.node(seed.node);
    if (!seedNode) continue;
    const api::Pod* live = nullptr;
    for (const api::Pod* p : snapshot.podsOnNode(seed.node))
      if (p->ns == seed.ns && p->name == seed.name) live = p;
    if (!live || live->isTerminating()) continue;  // gone or going since the event
    if (seed.status) {
      scope.pods.insert({seed.ns, seed.name});
      scope.plugins.insert(kStatusPlugins.begin(), kStatusPlugins.end());
    }
    if (!seed.placement || live->isTerminal()) continue;
    if (seed.carriesAntiAffinity) {
      scope.pods.insert({seed.ns, seed.name});
      scope.plugins.insert(kAntiAffinityPlugin);
    }
    addCarriersSelecting(snapshot, groups, *live, *seedNode, nsLabels, scope);
    if (!scope.balance && (countedBySpread(snapshot, *live) || besideSibling(snapshot, *live))) scope.balance = true;
  }
}

void addNodeSeeds(const cluster::Snapshot& snapshot, const std::vector<NodeSeed>& seeds, Scope& scope) {
  for (const NodeSeed& seed : seeds) {
    const api::Node* node = snapshot.node(seed.name);
    if (!node) continue;
    scope.balance = true;
    const bool taints = seed.taintsChanged && !node->taints.empty();
    for (const api::Pod* p : snapshot.podsOnNode(node->nameSym)) {
      if (p->isTerminal() || p->isTerminating()) continue;
      if (taints) {
        scope.pods.insert(api::PodName::of(*p));
        scope.plugins.insert(kNodeTaintsPlugin);
      }
      const auto& c = p->constraints();
      if (c.nodeAffinity && (c.nodeAffinity->required || !c.nodeAffinity->preferred.empty())) {
        scope.pods.insert(api::PodName::of(*p));
        scope.plugins.insert(kNodeAffinityPlugin);
      }
      if (c.hasRequiredAntiAffinity()) {
        scope.pods.insert(api::PodName::of(*p));
        scope.plugins.insert(kAntiAffinityPlugin);
      }
    }
  }
}

}  // namespace

Scope affectedPods(const cluster::Snapshot& snapshot, const Seeds& seeds) {
  Scope scope;
  scope.balance = seeds.balance;
  addPodSeeds(snapshot, seeds.pods, scope);
  addNodeSeeds(snapshot, seeds.nodes, scope);
  return scope;
}

}  // namespace kdesched::trigger
