// The topology domains of one namespace's spread constraints: which nodes make each constraint's
// domains, which pods count in each, and the counts as moves are planned. DomainBuilder derives
// and counts them as upstream's Balance does (topologyspreadconstraint.go): per namespace its
// distinct constraints; per constraint one domain for each value of the topology key on the nodes
// its inclusion policies admit; in each domain the pods that match the constraint's selector and
// are not terminating. ConstraintBalancer (balancing.h) plans the moves.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pkg/framework/plugin.h"
#include "pkg/plugins/topologyspread/args.h"

namespace kdesched::plugins::topologyspread {

inline std::size_t mixHash(std::size_t seed, std::size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Per-domain pod counts with histograms of the counts, so the extremes stay O(log domains) as pods
// are planned to move (a hostname constraint has one domain per node).
class DomainCounts {
 public:
  void addDomain(bool eligible);
  void add(int d, int delta);
  int count(int d) const { return counts_[static_cast<std::size_t>(d)]; }
  int max() const { return all_.empty() ? 0 : all_.rbegin()->first; }
  int min() const { return all_.empty() ? 0 : all_.begin()->first; }
  int minEligible() const { return eligibleHist_.empty() ? 0 : eligibleHist_.begin()->first; }

 private:
  static void bump(std::map<int, int>& h, int value, int delta);
  std::vector<int> counts_;
  std::vector<bool> eligible_;
  std::map<int, int> all_;
  std::map<int, int> eligibleHist_;
};

// One deduplicated constraint of a namespace, in upstream's internal form, with its domains.
struct Constraint {
  const api::TopologySpreadConstraint* declared = nullptr;  // as first declared (for messages)
  std::int32_t maxSkew = 1;
  api::UnsatisfiableAction when = api::UnsatisfiableAction::DoNotSchedule;
  std::int32_t minDomains = 0;                 // 0: unset, or ScheduleAnyway (where it has no meaning)
  std::optional<api::LabelSelector> selector;  // merged with matchLabelKeys; unset selects nothing
  int scope = -1;                              // which nodes are eligible (DomainBuilder's scope table)
  const std::vector<std::optional<api::Symbol>>* nodeValues = nullptr;  // topology value per cycle node
  bool balanced = false;                                                // its whenUnsatisfiable is one the args act on

  // Domains pre-created from eligible nodes come first; pods on nodes failing the inclusion
  // policies add implicit ones, as upstream's map does; planned moves may add more to `live`.
  std::vector<api::Symbol> domainValue;
  std::unordered_map<api::Symbol, int> domainIndex;
  std::vector<std::vector<int>> domainNodes;  // eligible cycle-node indices
  std::vector<std::vector<int>> domainPods;   // pod entries counted, in pod-name order
  int eligibleDomains = 0;
  int countedDomains = 0;  // domains when counting finished: the ones balancing works on
  int countedPods = 0;
  std::vector<int> initial;  // counts as found
  DomainCounts live;         // counts with the moves planned so far
  std::string description;   // for reasons, built on first use

  // The domain of `value`, created (eligible or not) when new.
  int domain(const api::Symbol& value, bool eligible);
  int findDomain(const api::Symbol& value) const;
  // kube-scheduler treats the global minimum as 0 while fewer eligible domains than minDomains
  // exist (minDomains only applies to DoNotSchedule).
  bool minDomainsUnmet() const {
    return when == api::UnsatisfiableAction::DoNotSchedule && minDomains > eligibleDomains;
  }
  int skew() const { return live.max() - (minDomainsUnmet() ? 0 : live.min()); }
  int initialSkew() const;
  // Identity for balancing as upstream deduplicates it (its internal form has neither
  // whenUnsatisfiable nor minDomains).
  bool sameBalancing(const Constraint& o) const {
    return scope == o.scope && maxSkew == o.maxSkew && selector == o.selector;
  }
};

// A listed pod of the namespace.
struct PodEntry {
  const api::Pod* pod = nullptr;
  int node = -1;                             // cycle-node index
  int templ = -1;                            // fit template, assigned on first use (balancing.h)
  std::vector<int> declared;                 // constraints this pod declares
  std::vector<int> matched;                  // constraints whose selector matches this pod
  std::vector<std::pair<int, int>> counted;  // (constraint, domain) this pod is counted in
  bool chosen = false;                       // an eviction candidate already
  int target = -1;                           // once chosen: the node it should land on (-1: not planned)

  // The domain this pod is counted in for constraint ci, or -1.
  int countedDomain(int ci) const;
};

// One namespace's listed pods and the constraints they declare, counted.
struct NamespaceDomains {
  std::vector<PodEntry> entries;
  std::vector<Constraint> constraints;

  PodEntry& entry(int ei) { return entries[static_cast<std::size_t>(ei)]; }
  Constraint& constraint(int ci) { return constraints[static_cast<std::size_t>(ci)]; }
};

// Which nodes make a constraint's domains: the topology key plus, per inclusion policy, the
// declaring pod's required node affinity and tolerations, as upstream's matchNodeInclusionPolicies
// (topologyspreadconstraint.go): nodeAffinityPolicy is Honor and nodeTaintsPolicy Ignore when
// unset, and only NoSchedule and NoExecute taints count. Shared by every constraint with the same
// scope, so the node scan runs once per distinct scope in a cycle.
struct NodeScope {
  std::string topologyKey;
  bool honorAffinity = true;
  api::SchedulingConstraints affinity;  // only nodeSelector and nodeAffinity.required are set
  bool honorTaints = false;
  std::vector<api::Toleration> tolerations;
  bool operator==(const NodeScope&) const = default;
};

// Builds NamespaceDomains, namespace after namespace of one cycle. What depends only on the
// cycle's nodes (topology values per key, eligible nodes per scope) is computed once per cycle.
class DomainBuilder {
 public:
  DomainBuilder(const framework::Handle& h, const Args& args);

  // `pods`: all snapshot pods of one namespace, in name order. Lists them (on a cycle node, not
  // terminal, not evicted, allowed by the args' filter, passing the evictor's Filter), derives
  // their constraints and counts them. False, and `out` left alone, when no listed pod declares a
  // constraint the args balance: then the evictor's Filter is not run for the namespace at all.
  bool build(std::span<const api::Pod* const> pods, NamespaceDomains& out);

 private:
  struct EligibleNode {
    int node;
    api::Symbol value;
  };
  struct SpecKeyHash {
    std::size_t operator()(const std::pair<const api::SchedulingConstraints*, std::string>& k) const noexcept {
      return mixHash(std::hash<const void*>()(k.first), std::hash<std::string>()(k.second));
    }
  };

  std::vector<int> declaredConstraints(const api::Pod& pod);
  Constraint makeConstraint(const api::TopologySpreadConstraint& tsc, const api::Pod& pod);
  int intern(Constraint c);
  int internScope(NodeScope s);
  const std::vector<std::optional<api::Symbol>>& valuesFor(const std::string& key);
  const std::vector<EligibleNode>& eligibleNodes(int scope);
  void count(int ci);

  const framework::Handle& h_;
  const Args& args_;
  const std::vector<const api::Node*>& nodes_;
  std::unordered_map<api::Symbol, int> nodeIndex_;

  // Per namespace (the one being built).
  NamespaceDomains* ns_ = nullptr;
  std::unordered_map<const api::Pod*, int> entryIndex_;
  std::unordered_map<std::string, std::vector<int>> consByKey_;
  std::unordered_map<std::pair<const api::SchedulingConstraints*, std::string>, std::vector<int>, SpecKeyHash>
      declaredCache_;

  // Per cycle.
  std::vector<NodeScope> scopes_;
  std::unordered_map<std::size_t, std::vector<int>> scopesByHash_;
  std::vector<std::vector<EligibleNode>> eligible_;
  std::vector<bool> eligibleDone_;
  std::unordered_map<std::string, std::vector<std::optional<api::Symbol>>> valuesByKey_;
};

}  // namespace kdesched::plugins::topologyspread
