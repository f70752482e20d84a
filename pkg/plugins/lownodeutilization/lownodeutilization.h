// Upstream: LowNodeUtilization (plugins/nodeutilization/).
// A balance plugin: moves pods off nodes whose requested resources exceed targetThresholds while
// nodes under thresholds have room for them, with upstream v0.36's classification, ordering, stop
// conditions and accounting (reference §2.5). Usage is the sum of the requests of a node's live
// pods; metrics-based usage is not supported.
#pragma once

#include <string>
#include <vector>

#include "pkg/framework/registry.h"
#include "pkg/plugins/common/node_usage.h"
#include "pkg/plugins/lownodeutilization/args.h"

namespace kdesched::plugins::lownodeutilization {

class LowNodeUtilization : public framework::BalancePlugin {
 public:
  explicit LowNodeUtilization(Args args);
  std::string_view name() const override { return kName; }
  Status balance(framework::Handle& h) override;

  // cpu, memory, pods, then the other threshold resources by name: what usage is tracked for.
  const std::vector<api::Symbol>& trackedResources() const { return tracked_; }

 private:
  Args args_;
  std::vector<api::Symbol> tracked_;
};

framework::PluginRegistration registration();

using nodeusage::formatPercent;

}  // namespace kdesched::plugins::lownodeutilization
