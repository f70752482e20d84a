#include "pkg/framework/landing.h"

#include <algorithm>
#include <map>

#include "pkg/framework/nodefit.h"
#include "pkg/framework/spread_fit.h"

namespace kdesched::framework {
namespace {

// kube-scheduler's LeastAllocated for one resource: the share of the node left free once the pod
// is on it, 0..100 (0 when the node has none of it or is over-committed).
std::int64_t leastAllocated(const api::Symbol& res, const api::Node& node, const api::ResourceList& used,
                            const api::Pod& pod) {
  const std::int64_t allocatable = node.allocatable.get(res);
  const std::int64_t requested = api::addSaturating(used.get(res), pod.requests.get(res));
  if (allocatable <= 0 || requested > allocatable) return 0;
  // In 128 bits: a saturated allocatable (api::kSaturatedMilli) times 100 does not fit in 64.
  return static_cast<std::int64_t>(static_cast<__int128>(allocatable - requested) * 100 / allocatable);
}

std::string tally(const std::vector<std::pair<std::string, std::size_t>>& unfit) {
  std::string out;
  for (const auto& [check, n] : unfit) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + check;
  return out;
}

}  // namespace

std::string Landing::column() const {
  if (!estimated) return "";
  if (fits.empty()) return "nowhere: would stay Pending";
  if (fitCount == 1 && fitCountExact) return fits.front();
  return fits.front() + " (+" + std::to_string(fitCount - 1) + (fitCountExact ? " fit)" : " or more fit)");
}

std::string Landing::describe() const {
  if (!estimated) return "";
  if (fits.empty()) {
    std::string why = tally(unfit);
    return "fits no node, would stay Pending" + (why.empty() ? std::string(" (no other node)") : " (" + why + ")");
  }
  std::string list;
  for (const auto& n : fits) list += (list.empty() ? "" : ", ") + n;
  if (fitCount > fits.size()) list += " and " + std::to_string(fitCount - fits.size()) + " more";
  return "expected on " + fits.front() + " (fits " + std::to_string(fitCount) + (fitCountExact ? "" : " or more") +
         (fitCount == 1 && fitCountExact ? " node: " : " nodes: ") + list + ")";
}

Landing estimateLanding(const Handle& h, const api::Pod& pod) {
  Landing out;
  out.estimated = true;
  const SpreadFit spread(h, pod);
  std::map<std::string, std::size_t> unfit;
  std::vector<std::pair<std::int64_t, const api::Node*>> fitting;  // (score, node)
  const auto& nodes = h.snapshot().nodes();
  // Round the nodes (sorted by name) from the one after the pod's own.
  const std::size_t own = static_cast<std::size_t>(
      std::lower_bound(nodes.begin(), nodes.end(), pod.nodeName.view(),
                       [](const api::Node* n, std::string_view name) { return n->name < name; }) -
      nodes.begin());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const api::Node* n = nodes[(own + 1 + i) % nodes.size()];
    if (n->nameSym == pod.nodeName) continue;
    if (nodes.size() > Landing::kExactUpTo && fitting.size() >= Landing::kEnoughFits) {
      out.fitCountExact = false;
      break;
    }
    if (!n->isReady()) {
      ++unfit["not ready"];
      continue;
    }
    FitResult f = nodeFit(h, pod, *n);
    if (f.fits && spread.constrained()) f = spread.check(*n);
    if (!f.fits) {
      ++unfit[f.check];
      continue;
    }
    const api::ResourceList used = nodeRequestedResources(h, *n);
    fitting.emplace_back(
        (leastAllocated(api::kCpu(), *n, used, pod) + leastAllocated(api::kMemory(), *n, used, pod)) / 2, n);
  }
  out.fitCount = fitting.size();
  const std::size_t listed = std::min(fitting.size(), Landing::kListed);
  std::partial_sort(fitting.begin(), fitting.begin() + static_cast<std::ptrdiff_t>(listed), fitting.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second->name < b.second->name;
                    });
  for (std::size_t i = 0; i < listed; ++i) out.fits.push_back(fitting[i].second->name);
  out.unfit.assign(unfit.begin(), unfit.end());
  std::stable_sort(out.unfit.begin(), out.unfit.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

}  // namespace kdesched::framework
