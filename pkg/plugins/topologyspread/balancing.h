// Balancing one spread constraint: upstream's two-pointer arithmetic over its domains, which pods
// of a crowded domain can move (the movable/protected partition) and where each is expected to
// land (the target search), with the counts of every constraint of the namespace following the
// moves. See docs/strategies/topology-spread.md, "How balancing works".
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/plugins/topologyspread/domains.h"

namespace kdesched::plugins::topologyspread {

// A pod chosen to move, and why, for the evictor.
struct Candidate {
  const api::Pod* pod;
  std::string reason;
};

// What the target search keeps for a whole cycle: nodeFit per (pod template, node), and the room
// left on nodes where chosen pods are planned to land.
class Placements {
 public:
  explicit Placements(const framework::Handle& h) : h_(h), nodes_(h.nodes()) {}

  // nodeFit for a pod of e's template that is not on node n yet (never e's own node).
  bool fits(PodEntry& e, int n);
  // Room left on n once the pods already planned to land there are counted (nodeFit alone sees
  // the node as it is, so it would send every candidate to the same last free slot). Nodes
  // without planned arrivals are as nodeFit saw them.
  bool roomFor(const api::Pod& pod, int n) const;
  void reserve(const api::Pod& pod, int n);
  // Pods with the same namespace, labels, requests and scheduling spec fit the same nodes: they
  // share a template, so nodeFit runs once per (template, node) rather than per pod.
  int templateOf(PodEntry& e);

 private:
  const framework::Handle& h_;
  const std::vector<const api::Node*>& nodes_;
  std::unordered_map<const api::SchedulingConstraints*, std::size_t> specHash_;
  std::unordered_map<std::size_t, std::vector<int>> templByHash_;
  std::vector<const api::Pod*> templReps_;
  std::unordered_map<std::uint64_t, bool> fitMemo_;
  std::unordered_map<int, api::ResourceList> free_;  // nodes with planned arrivals: room left
};

// Plans the moves for one constraint of a namespace: which pods leave its crowded domains. The
// chosen pods are appended to `candidates`; every constraint's live counts follow the moves, so
// later constraints (and later namespaces' targets) see them.
class ConstraintBalancer {
 public:
  ConstraintBalancer(const framework::Handle& h, const Args& args, NamespaceDomains& ns, int k, Placements& placements,
                     std::vector<Candidate>& candidates);
  void run();

 private:
  // Eligible nodes of the domains below the ideal average, in upstream's nodesBelowIdealAvg
  // order (domains smallest first, then node name), with each node's domain.
  struct Below {
    std::vector<int> nodes;
    std::vector<int> domains;
  };
  // One of a pod's other DoNotSchedule constraints, as kube-scheduler's PodTopologySpread filter
  // will see it once the pod has left its domain.
  struct HardCheck {
    const Constraint* c;
    int self;       // 1 when the pod matches the constraint's own selector
    int from;       // the pod's domain, -1 when it is not counted
    int globalMin;  // with the pod gone; 0 while minDomains is unmet
  };

  // Whether a pod can move now toward the domain a move fills: one test for the partition and the
  // target search (judge()). kProtected: it stays (moving would break another of its constraints,
  // or with the fit check on no below-average node takes it); kFitsNowhere: it may move though no
  // below-average node fits it (fit check off only); kMovable: it may move, to `target` when the
  // fit check is on. The balancing takes kMovable pods first, then kFitsNowhere.
  enum Tier { kProtected = 0, kFitsNowhere = 1, kMovable = 2 };
  struct Mobility {
    Tier tier = kProtected;
    int target = -1;  // the node it would land on; -1 when none is planned (fit check off)
  };
  // One move's walk over a domain's pods, from the end of its list (highest rank first).
  struct Walk {
    const std::vector<int>& list;
    int toDomain;
    std::size_t next;                      // positions below `next` are not evaluated yet
    std::vector<std::size_t> fitsNowhere;  // evaluated kFitsNowhere positions, highest first
    std::size_t fitsNowhereUsed = 0;
    std::vector<char> taken;  // per position: leaves the domain in this move
  };

  void orderDomains();
  void rankPods();
  void findBelowAverage();
  void moveBetween(int di, int dj, int move);
  std::size_t takeChosenHeadedTo(Walk& w, int move);
  std::optional<std::size_t> nextPick(Walk& w);
  Mobility evaluate(int ei, int toDomain);
  Mobility judge(PodEntry& e, int toDomain);
  bool plan(int ei, int toDomain);
  void choose(PodEntry& e, int target, int toDomain);
  bool fitsSomeBelowAverageNode(PodEntry& e);
  bool leavesOtherConstraintsIntact(const PodEntry& e);
  std::vector<HardCheck> hardChecks(const PodEntry& e);
  static bool hardChecksAllow(const std::vector<HardCheck>& checks, int n);
  int findTarget(PodEntry& e, int toDomain);
  std::string reason(int from) const;

  const framework::Handle& h_;
  const Args& args_;
  struct NotChosen;
  std::string whyNotChosen(int d) const;
  void skipUnchosen() const;

  NamespaceDomains& ns_;
  const int k_;
  Constraint& c_;
  Placements& placements_;
  std::vector<Candidate>& candidates_;

  int skewBefore_ = 0;
  double idealAvg_ = 0;
  std::vector<int> size_;                // domain sizes in the balancing's bookkeeping
  std::vector<int> order_;               // domains, smallest first
  std::vector<std::vector<int>> lists_;  // per domain, its pods; taken from the end
  Below below_;
  int maxD_ = -1, minD_ = -1;                // largest and smallest domain as found (for reasons)
  std::unordered_map<int, bool> fitsBelow_;  // per template: fits some below-average node
  // Per pod, its last verdict and what it was drawn from, so a reused verdict is always the one
  // judge() would give now. In a cycle nodeFit per (template, node) never changes (Placements
  // keeps it), the room on a node only shrinks as moves are planned, and the removal and placement
  // checks read the live counts of the pod's other constraints. Hence:
  //  - a movable verdict names a target whose room the next choice may take: it holds while no
  //    pod has been chosen since (`planned_` counts the choices), for the same destination domain
  //    (which decides the target's pass);
  //  - a protected verdict can only turn when a choice changes the counts of one of the pod's
  //    other constraints (`changes_`): no node starts to fit or regains room, and the target
  //    search tries every below-average node whatever the destination domain. A pod declaring
  //    only the constraint being balanced is judged protected once per constraint.
  // Reusing costs O(constraints the pod declares). A walk asks about a pod once (moveBetween), so
  // a protected pod costs at most one more target search per move out of its domain, and only
  // after its other constraints' counts changed.
  struct Memo {
    std::uint64_t planned;
    int toDomain;
    std::uint64_t deps;  // depsOf() when judged
    Mobility mobility;
  };
  std::uint64_t depsOf(const PodEntry& e) const;
  std::unordered_map<int, Memo> mobilities_;
  std::uint64_t planned_ = 0;
  std::vector<std::uint64_t> changes_;  // per constraint of the namespace: choices that changed its counts
};

}  // namespace kdesched::plugins::topologyspread
