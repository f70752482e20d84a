#include "pkg/plugins/makeroomforpendingpods/rotation.h"

#include <algorithm>
#include <numeric>

#include "pkg/plugins/makeroomforpendingpods/pending.h"

namespace kdesched::plugins::makeroomforpendingpods {

std::string SearchRotation::idOf(const api::Pod& pod) { return pod.uid.empty() ? pod.key() : pod.uid.str(); }

std::uint64_t SearchRotation::startRun() {
  std::lock_guard<std::mutex> lock(mu_);
  return ++runs_;
}

void SearchRotation::fruitless(const api::Pod& pod, std::uint64_t run) {
  std::lock_guard<std::mutex> lock(mu_);
  lastFruitless_[idOf(pod)] = run;
}

std::size_t SearchRotation::remembered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lastFruitless_.size();
}

SearchRotation::Choice SearchRotation::choose(const std::vector<const api::Pod*>& ordered, std::size_t cap,
                                              bool fullRun) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::uint64_t> last(ordered.size(), 0);  // 0: never searched fruitlessly
  for (std::size_t i = 0; i < ordered.size(); ++i)
    if (const auto it = lastFruitless_.find(idOf(*ordered[i])); it != lastFruitless_.end()) last[i] = it->second;
  if (fullRun) {
    std::unordered_map<std::string, std::uint64_t> kept;
    for (std::size_t i = 0; i < ordered.size(); ++i)
      if (last[i] != 0) kept.emplace(idOf(*ordered[i]), last[i]);
    lastFruitless_.swap(kept);
  }
  Choice out;
  if (ordered.size() <= cap) {  // every pod gets its own search at most: nothing to choose
    out.searched = ordered;
    return out;
  }
  // Rotation order: least recently searched first; `ordered`'s order (priority, age) breaks ties.
  std::vector<std::size_t> byTurn(ordered.size());
  std::iota(byTurn.begin(), byTurn.end(), 0);
  std::stable_sort(byTurn.begin(), byTurn.end(), [&](std::size_t a, std::size_t b) { return last[a] < last[b]; });
  std::vector<char> chosen(ordered.size(), 0);
  AlikeGroups<char> costed;  // the pods chosen so far that cost a search
  std::size_t budget = cap;
  for (std::size_t i : byTurn) {
    const api::Pod& pod = *ordered[i];
    if (!costed.find(pod)) {
      if (budget == 0) continue;
      --budget;
      costed.add(pod, 1);
    }
    chosen[i] = 1;
  }
  for (std::size_t i = 0; i < ordered.size(); ++i) (chosen[i] ? out.searched : out.left).push_back(ordered[i]);
  return out;
}

}  // namespace kdesched::plugins::makeroomforpendingpods
