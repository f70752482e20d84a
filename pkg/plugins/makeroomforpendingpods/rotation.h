// Which pending pods a run searches. A search costs one pass over the nodes and the pods of the
// nodes left (room.h), so a run that searched every pending pod would cost pending pods × nodes:
// quadratic in cluster size when pending pods grow with it. A run searches at most
// kSearchesPerRun pods; pods alike to one already chosen (pending.h: alikePending) come free, as
// their search is shared. The cap picks pods by rotation, not by priority alone, so the same
// unhelpable high-priority pods cannot starve the rest: pods never searched (or whose last search
// is the oldest) first, then priority, then age. The chosen pods are then searched in priority
// order, as without the cap, so two pods competing for one freed slot still go by priority.
//
// Memory: one entry per pending pod whose search found no room, the run it was searched in; a
// full run drops the entries of pods no longer pending. A restart forgets them (a one-shot run
// chooses by priority and age alone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "pkg/api/types.h"

namespace kdesched::plugins::makeroomforpendingpods {

inline constexpr std::size_t kSearchesPerRun = 64;

class SearchRotation {
 public:
  struct Choice {
    std::vector<const api::Pod*> searched;  // in the order given (priority, then age)
    std::vector<const api::Pod*> left;      // not searched this run, in the order given
  };
  // Starts a run: its number, from 1.
  std::uint64_t startRun();
  // Chooses from `ordered` (the run's pods to help, in search order) at most `cap` pods that need
  // a search of their own. `fullRun`: `ordered` is every pending pod, so memory of the others goes.
  Choice choose(const std::vector<const api::Pod*>& ordered, std::size_t cap, bool fullRun);
  // `pod`'s search in run `run` found no room (or it shared such an answer).
  void fruitless(const api::Pod& pod, std::uint64_t run);
  std::size_t remembered() const;

 private:
  static std::string idOf(const api::Pod& pod);
  mutable std::mutex mu_;
  std::uint64_t runs_ = 0;
  std::unordered_map<std::string, std::uint64_t> lastFruitless_;  // pod UID (or ns/name) -> run
};

}  // namespace kdesched::plugins::makeroomforpendingpods
