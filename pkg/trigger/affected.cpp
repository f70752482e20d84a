#include "pkg/trigger/affected.h"

#include "pkg/api/scheduling.h"

#include <map>

namespace kdesched::trigger {
namespace {

bool sameLabels(const api::Labels& a, const api::Labels& b) { return a == b; }

bool taintsEqual(const std::vector<api::Taint>& a, const std::vector<api::Taint>& b) { return a == b; }

PodSeed seedOf(const api::Pod& p) {
  return {p.key(), p.ns, p.name, p.labels, p.nodeName, p.constraints().hasRequiredAntiAffinity()};
}

}  // namespace

std::string addSeed(const cluster::StoreEvent& event, Seeds& seeds) {
  if (auto* c = std::get_if<cluster::Change<api::Pod>>(&event)) {
    if (c->type == cluster::EventType::Deleted) {
      seeds.balance = true;
      return "pod-deleted";
    }
    const api::Pod& now = *c->after;
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
    seeds.nodes.push_back({a.name});
    return "node-changed";
  }
  return "";
}

Scope affectedPods(const cluster::Snapshot& snapshot, const Seeds& seeds) {
  Scope scope;
  scope.balance = seeds.balance;
  auto nsLabels = [&snapshot](const api::Symbol& ns) -> const api::Labels* {
    const api::Namespace* n = snapshot.namespaceByName(ns.view());
    return n ? &n->labels : nullptr;
  };

  if (!seeds.pods.empty()) {
    // Carriers of required anti-affinity terms, grouped by their shared constraints block and
    // namespace: whether a term selects a pod depends only on those (unless the term uses
    // matchLabelKeys/mismatchLabelKeys, which read the carrier's own labels), so each group's terms
    // are matched once per seed, and only the matching groups are walked for topology domains.
    struct Group {
      const api::Pod* first;
      bool perPod;  // the terms read the carrier's labels: match per carrier
      std::vector<const api::Pod*> pods;
    };
    std::map<std::pair<const api::SchedulingConstraints*, std::string_view>, Group> groups;
    for (const api::Pod* p : snapshot.pods()) {
      if (p->nodeName.empty() || p->isTerminal() || p->isTerminating() || !p->constraints().hasRequiredAntiAffinity())
        continue;
      auto& g = groups[{&p->constraints(), p->ns.view()}];
      if (!g.first) {
        g.first = p;
        for (const auto& t : p->constraints().podAntiAffinity->required)
          if (!t.matchLabelKeys.empty() || !t.mismatchLabelKeys.empty()) g.perPod = true;
      }
      g.pods.push_back(p);
    }
    for (const PodSeed& seed : seeds.pods) {
      const api::Node* seedNode = snapshot.node(seed.node);
      if (!seedNode) continue;
      const api::Pod* live = nullptr;
      for (const api::Pod* p : snapshot.podsOnNode(seed.node))
        if (p->ns == seed.ns && p->name == seed.name) live = p;
      if (!live || live->isTerminating() || live->isTerminal()) continue;  // gone or going since the event
      if (seed.carriesAntiAffinity) {
        scope.pods.insert(seed.key);
        scope.plugins.insert(kAntiAffinityPlugin);
      }
      for (const auto& [id, g] : groups) {
        const auto& terms = id.first->podAntiAffinity->required;
        for (const auto& term : terms) {
          if (!g.perPod && !api::podAffinityTermMatches(term, *g.first, *live, nsLabels)) continue;
          for (const api::Pod* carrier : g.pods) {
            if (carrier == live) continue;
            if (g.perPod && !api::podAffinityTermMatches(term, *carrier, *live, nsLabels)) continue;
            const api::Node* carrierNode = snapshot.node(carrier->nodeName);
            if (!carrierNode) continue;
            bool sameDomain = carrierNode == seedNode;
            if (!sameDomain) {
              auto domain = carrierNode->labels.get(term.topologyKey);
              auto seedDomain = seedNode->labels.get(term.topologyKey);
              sameDomain = domain && seedDomain && *seedDomain == *domain;
            }
            if (!sameDomain) continue;
            scope.pods.insert(carrier->key());
            scope.plugins.insert(kAntiAffinityPlugin);
          }
        }
      }
      // Spread constraints that count this pod: their domains changed size.
      if (!scope.balance) {
        std::unordered_set<const api::SchedulingConstraints*> spreadChecked;
        for (const api::Pod* p : snapshot.podsInNamespace(seed.ns)) {
          if (!spreadChecked.insert(&p->constraints()).second) continue;
          for (const auto& c : p->constraints().topologySpreadConstraints) {
            if (c.labelSelector && c.labelSelector->matches(live->labels)) {
              scope.balance = true;
              break;
            }
          }
          if (scope.balance) break;
        }
      }
    }
  }

  for (const NodeSeed& seed : seeds.nodes) {
    const api::Node* node = snapshot.node(seed.name);
    if (!node) continue;
    scope.balance = true;
    for (const api::Pod* p : snapshot.podsOnNode(node->nameSym)) {
      if (p->isTerminal() || p->isTerminating()) continue;
      const auto& c = p->constraints();
      if (c.nodeAffinity && c.nodeAffinity->required) {
        scope.pods.insert(p->key());
        scope.plugins.insert(kNodeAffinityPlugin);
      }
      if (c.nodeAffinity && !c.nodeAffinity->preferred.empty()) {
        scope.pods.insert(p->key());
        scope.plugins.insert(kNodeAffinityPlugin);
      }
      if (c.hasRequiredAntiAffinity()) {
        scope.pods.insert(p->key());
        scope.plugins.insert(kAntiAffinityPlugin);
      }
    }
  }
  return scope;
}

}  // namespace kdesched::trigger
