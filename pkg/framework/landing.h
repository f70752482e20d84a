// Where will it land? For a planned eviction, the nodes its pod fits now, by the scheduler's
// filters that kdesched models (nodeFit's: cordon, node selector/affinity, taints, pod
// anti-affinity both ways, pods and resources; plus DoNotSchedule topology spread, spread_fit.h),
// and the one the scheduler most likely picks: the least allocated by requests (kube-scheduler's
// default NodeResourcesFit LeastAllocated score over cpu and memory), ties by name. An estimate
// and information only: it never changes a decision (DefaultEvictor's nodeFit is the switch that
// refuses pods that fit nowhere). It reads the cycle's state as the decisions do (pods evicted
// earlier in the cycle are gone).
//
// Cost: a full nodeFit per node looked at. In a cluster of more than kExactUpTo nodes it stops at
// the first kEnoughFits nodes that fit, going round the nodes (by name) from the one after the
// pod's own, and the count is then a lower bound: kube-scheduler too stops looking once it has
// found a share of the nodes feasible (percentageOfNodesToScore), and a full scan per eviction
// made a 5,000-node, 1,673-eviction cycle 100 times slower. A pod that fits nowhere is checked
// against every node, so its tally is complete.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "pkg/framework/plugin.h"

namespace kdesched::framework {

struct Landing {
  static constexpr std::size_t kListed = 3;
  static constexpr std::size_t kExactUpTo = 100;
  static constexpr std::size_t kEnoughFits = 10;

  bool estimated = false;         // false: nobody estimated it (a Decision built by hand)
  std::vector<std::string> fits;  // the best kListed fitting nodes, the expected one first
  std::size_t fitCount = 0;       // the nodes it fits, its own left out
  bool fitCountExact = true;      // false: the look stopped at kEnoughFits, there may be more
  // Why the other nodes do not fit (the first failing check of each): check -> nodes, most first.
  std::vector<std::pair<std::string, std::size_t>> unfit;

  bool fitsNowhere() const { return estimated && fitCount == 0; }
  // The node it is expected on; "" when it fits nowhere or was not estimated.
  std::string expected() const { return fits.empty() ? std::string() : fits.front(); }
  // For a table column: "node2", "node2 (+4 fit)", "node2 (+9 or more fit)", "nowhere: would stay
  // Pending"; "" unestimated.
  std::string column() const;
  // For a sentence: "expected on node2 (fits 5 nodes: node2, node3, node1 and 2 more)", "fits no
  // node, would stay Pending (2 insufficient cpu, 1 untolerated taint)"; "" unestimated.
  std::string describe() const;
};

// At most O(nodes) nodeFit checks (see above), plus O(nodes + pods of its namespace) when the pod
// has a DoNotSchedule spread constraint.
Landing estimateLanding(const Handle& h, const api::Pod& pod);

}  // namespace kdesched::framework
