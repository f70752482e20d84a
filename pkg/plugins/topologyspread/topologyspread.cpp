#include "pkg/plugins/topologyspread/topologyspread.h"

#include <algorithm>
#include <span>
#include <unordered_set>

#include "pkg/plugins/common/registration.h"
#include "pkg/plugins/topologyspread/balancing.h"
#include "pkg/plugins/topologyspread/domains.h"

namespace kdesched::plugins::topologyspread {
namespace {

// Balances each constraint of the namespace once, in order of first declaration. Constraints that
// differ only in whenUnsatisfiable or minDomains are balanced once, as upstream's deduplication
// (which ignores those fields) does.
void balanceNamespace(const framework::Handle& h, const Args& args, NamespaceDomains& ns, Placements& placements,
                      std::vector<Candidate>& candidates) {
  std::vector<int> done;
  for (std::size_t ci = 0; ci < ns.constraints.size(); ++ci) {
    const Constraint& c = ns.constraints[ci];
    if (!c.balanced) continue;
    if (std::any_of(done.begin(), done.end(), [&](int o) { return ns.constraint(o).sameBalancing(c); })) continue;
    done.push_back(static_cast<int>(ci));
    ConstraintBalancer(h, args, ns, static_cast<int>(ci), placements, candidates).run();
  }
}

}  // namespace

Status RemovePodsViolatingTopologySpreadConstraint::balance(framework::Handle& h) {
  DomainBuilder domains(h, args_);
  Placements placements(h);
  std::vector<Candidate> candidates;
  // Snapshot pods are sorted by namespace/name, so each namespace is one contiguous run.
  const auto& pods = h.snapshot().pods();
  for (std::size_t begin = 0; begin < pods.size();) {
    std::size_t end = begin;
    while (end < pods.size() && pods[end]->ns == pods[begin]->ns) ++end;
    NamespaceDomains ns;
    if (domains.build(std::span<const api::Pod* const>(pods.data() + begin, end - begin), ns))
      balanceNamespace(h, args_, ns, placements, candidates);
    begin = end;
  }

  // Upstream walks its candidate set in Go map order (random); kdesched evicts in the order the
  // pods were chosen: namespace, constraint, then the balancing loop's order.
  std::unordered_set<api::Symbol> nodeLimited;
  for (const Candidate& cand : candidates) {
    if (nodeLimited.count(cand.pod->nodeName)) continue;
    framework::EvictResult res = h.evict(*cand.pod, cand.reason);
    if (res.refusal == framework::Refusal::NodeLimit) nodeLimited.insert(cand.pod->nodeName);
    if (res.stopsPlugin()) return Status::ok();
  }
  return Status::ok();
}

framework::PluginRegistration registration() {
  return common::registrationOf<RemovePodsViolatingTopologySpreadConstraint>(kName, decodeArgs);
}

}  // namespace kdesched::plugins::topologyspread
