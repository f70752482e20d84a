#include "pkg/framework/cycle.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace kdesched::framework {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::vector<const api::Node*> cycleNodes(const cluster::Snapshot& snapshot,
                                         const std::optional<api::LabelSelector>& nodeSelector) {
  std::vector<const api::Node*> out;
  for (const api::Node* n : snapshot.nodes()) {
    if (!n->isReady()) continue;
    if (nodeSelector && !nodeSelector->matches(n->labels)) continue;
    out.push_back(n);
  }
  return out;
}

CycleResult runCycle(const std::vector<Profile>& profiles, const cluster::Snapshot& snapshot,
                     const std::optional<api::LabelSelector>& nodeSelector, EvictorProvider& evictors,
                     CycleObserver* observer, const CycleScope& scope) {
  auto start = std::chrono::steady_clock::now();
  CycleResult result;
  std::vector<const api::Node*> nodes = cycleNodes(snapshot, nodeSelector);
  result.nodes = nodes.size();
  if (nodes.size() < 2) {
    result.skipped = true;
    result.skipReason =
        "requires >=2 ready nodes matching the policy's nodeSelector, found " + std::to_string(nodes.size());
    spdlog::warn("msg=\"skipping descheduling cycle\" reason=\"{}\"", result.skipReason);
    result.seconds = since(start);
    return result;
  }
  CycleState state;
  evictors.beginCycle(snapshot, state);

  auto selected = [&](const Plugin& plugin) {
    return scope.plugins.empty() ||
           std::find(scope.plugins.begin(), scope.plugins.end(), plugin.name()) != scope.plugins.end();
  };
  auto run = [&](const Profile& profile, Plugin& plugin, const char* point, auto&& call) {
    if (!selected(plugin)) return;
    Handle h(snapshot, nodes, state, &evictors.forProfile(profile), profile.name, std::string(plugin.name()),
             std::string_view(point) == "deschedule" ? scope.pods : nullptr);
    auto t0 = std::chrono::steady_clock::now();
    Status st = call(h);
    double secs = since(t0);
    if (!st.isOk())
      spdlog::error("msg=\"plugin finished with error\" plugin={} profile={} error=\"{}\"", plugin.name(), profile.name,
                    st.message());
    if (observer) observer->pluginFinished(profile.name, std::string(plugin.name()), secs, st);
    result.runs.push_back({profile.name, std::string(plugin.name()), point, secs, st});
  };

  if (scope.runDeschedule)
    for (const auto& profile : profiles)
      for (DeschedulePlugin* p : profile.deschedule)
        run(profile, *p, "deschedule", [p](Handle& h) { return p->deschedule(h); });
  if (scope.runBalance)
    for (const auto& profile : profiles)
      for (BalancePlugin* p : profile.balance) run(profile, *p, "balance", [p](Handle& h) { return p->balance(h); });

  result.seconds = since(start);
  return result;
}

}  // namespace kdesched::framework
