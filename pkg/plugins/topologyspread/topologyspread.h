// Upstream: RemovePodsViolatingTopologySpreadConstraint (plugins/removepodsviolatingtopologyspreadconstraint/).
// A balance plugin: for every topology spread constraint the listed pods declare, count matching
// pods per topology domain and, when the spread is wider than maxSkew, evict the fewest pods
// upstream's balancing arithmetic says must move from the largest domains toward the smallest. See
// docs/strategies/topology-spread.md for the deliberate differences from upstream (minDomains,
// cumulative fit, multi-constraint protection, order).
//
// The folder: domains.h derives a namespace's constraints and counts their domains, balancing.h
// plans one constraint's moves, and this plugin runs both per namespace, then evicts.
#pragma once

#include "pkg/framework/registry.h"
#include "pkg/plugins/topologyspread/args.h"

namespace kdesched::plugins::topologyspread {

class RemovePodsViolatingTopologySpreadConstraint : public framework::BalancePlugin {
 public:
  explicit RemovePodsViolatingTopologySpreadConstraint(Args args) : args_(std::move(args)) {}
  std::string_view name() const override { return kName; }
  Status balance(framework::Handle& h) override;

 private:
  Args args_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::topologyspread
