// Which pods a required anti-affinity term anywhere in the cache could select, as a necessary
// condition: every term names one requirement a selected pod must meet, its first positive one (a
// matchLabels pair, an In expression's values, an Exists key, a matchLabelKeys key with the
// carrier's value), or is a wildcard (an empty selector, or only NotIn/DoesNotExist). The trigger
// schedule uses it to tell the events that may have created a violation from the churn around
// them; it decides only how soon a batch runs, never what the run looks at.
#pragma once

#include <cstddef>
#include <functional>
#include <unordered_map>
#include <utility>

#include "pkg/api/labels.h"
#include "pkg/api/types.h"
#include "pkg/cluster/snapshot.h"

namespace kdesched::trigger {

class CarrierKeys {
 public:
  // Counts `pod`'s required anti-affinity terms in (add) or out (remove).
  void add(const api::Pod& pod) { count(pod, 1); }
  void remove(const api::Pod& pod) { count(pod, -1); }
  // A pod's update: nothing to recount when both versions share one constraints block (pods are
  // decoded into interned blocks) and no term reads the pod's labels (matchLabelKeys), or the
  // labels are unchanged.
  void update(const api::Pod& before, const api::Pod& after);
  // Every pod of the snapshot, in place of what was counted.
  void rebuild(const cluster::Snapshot& snapshot);
  // False only when no counted term can select a pod with these labels.
  bool mightSelect(const api::Labels& labels) const;
  bool empty() const { return pairs_.empty() && keys_.empty() && wildcards_ == 0; }

 private:
  using Pair = std::pair<api::Symbol, api::Symbol>;
  struct PairHash {
    std::size_t operator()(const Pair& p) const {
      return std::hash<api::Symbol>()(p.first) * 31 + std::hash<api::Symbol>()(p.second);
    }
  };
  void count(const api::Pod& pod, int delta);
  void countTerm(const api::Pod& carrier, const api::PodAffinityTerm& term, int delta);

  std::unordered_map<Pair, long, PairHash> pairs_;  // key=value a selected pod must carry
  std::unordered_map<api::Symbol, long> keys_;      // a key a selected pod must carry
  long wildcards_ = 0;
};

}  // namespace kdesched::trigger
