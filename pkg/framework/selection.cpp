#include "pkg/framework/selection.h"

#include <algorithm>

namespace kdesched::framework {

std::vector<cluster::Snapshot::Pods> selectorCandidates(const cluster::Snapshot& snapshot,
                                                        const api::LabelSelector& selector) {
  std::vector<cluster::Snapshot::Pods> best;
  std::size_t bestSize = snapshot.podCount() + 1;
  auto consider = [&](std::vector<cluster::Snapshot::Pods> spans) {
    std::size_t n = 0;
    for (const auto& s : spans) n += s.size();
    if (n < bestSize) {
      bestSize = n;
      best = std::move(spans);
    }
  };
  for (const auto& [k, v] : selector.matchLabels) consider({snapshot.podsWithLabel(api::Symbol(k), api::Symbol(v))});
  for (const auto& e : selector.matchExpressions) {
    if (e.op == api::LabelSelectorOp::In) {
      std::vector<cluster::Snapshot::Pods> spans;
      std::vector<std::string> seen;
      for (const auto& v : e.values) {
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
        seen.push_back(v);
        spans.push_back(snapshot.podsWithLabel(api::Symbol(e.key), api::Symbol(v)));
      }
      consider(std::move(spans));
    } else if (e.op == api::LabelSelectorOp::Exists || e.op == api::LabelSelectorOp::Gt ||
               e.op == api::LabelSelectorOp::Lt) {
      consider({snapshot.podsWithLabelKey(api::Symbol(e.key))});
    }
  }
  if (bestSize > snapshot.podCount()) return {cluster::Snapshot::Pods(snapshot.pods().data(), snapshot.pods().size())};
  return best;
}

}  // namespace kdesched::framework
