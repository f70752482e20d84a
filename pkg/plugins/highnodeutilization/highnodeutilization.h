// Upstream: HighNodeUtilization (plugins/nodeutilization/).
// A balance plugin, the opposite of LowNodeUtilization: evicts the pods of underutilized nodes
// (requests at or below `thresholds` for every listed resource) so the scheduler packs them onto
// the other schedulable nodes, which can then be scaled down. Meant for a scheduler scoring with
// MostAllocated. Shares its node usage code with LowNodeUtilization (common/node_usage), and with
// `metricsUtilization` (kdesched only) its measured-usage sources (common/measured_usage.h).
#pragma once

#include <string>
#include <vector>

#include "pkg/framework/registry.h"
#include "pkg/plugins/common/usage_choice.h"
#include "pkg/plugins/highnodeutilization/args.h"

namespace kdesched::plugins::highnodeutilization {

class HighNodeUtilization : public framework::BalancePlugin, public framework::UsagePlugin {
 public:
  explicit HighNodeUtilization(Args args, nodeusage::UsageChoice usage = {});
  std::string_view name() const override { return kName; }
  Status balance(framework::Handle& h) override;
  std::optional<usage::Needs::Consumer> usageNeed() const override;

 private:
  Args args_;
  nodeusage::UsageChoice usage_;
  // cpu, memory, pods, then the other threshold resources by name (MetricResource alone with a
  // Prometheus source).
  std::vector<api::Symbol> tracked_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::highnodeutilization
