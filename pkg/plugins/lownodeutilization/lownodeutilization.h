// Upstream: LowNodeUtilization (plugins/nodeutilization/).
// A balance plugin: moves pods off nodes whose requested resources exceed targetThresholds while
// nodes under thresholds have room for them, with upstream v0.36's classification, ordering, stop
// conditions and accounting (lownodeutilization.go and nodeutilization.go there). Usage is the sum
// of the requests of a node's live pods, or with `metricsUtilization` what a metrics source
// measured (metrics-server's NodeMetrics and PodMetrics, or a Prometheus score): see
// common/usage_choice.h and common/measured_usage.h.
#pragma once

#include <string>
#include <vector>

#include "pkg/framework/registry.h"
#include "pkg/plugins/common/node_usage.h"
#include "pkg/plugins/common/usage_choice.h"
#include "pkg/plugins/lownodeutilization/args.h"

namespace kdesched::plugins::lownodeutilization {

using nodeusage::UsageChoice;

class LowNodeUtilization : public framework::BalancePlugin, public framework::UsagePlugin {
 public:
  explicit LowNodeUtilization(Args args, UsageChoice usage = {});
  std::string_view name() const override { return kName; }
  Status balance(framework::Handle& h) override;
  std::optional<usage::Needs::Consumer> usageNeed() const override;

  // cpu, memory, pods, then the other threshold resources by name: what usage is tracked for
  // (MetricResource alone with a Prometheus source).
  const std::vector<api::Symbol>& trackedResources() const { return tracked_; }

 private:
  // The node usage this run classifies, by requests or by the chosen source.
  Result<std::vector<nodeusage::NodeUsage>> measure(framework::Handle& h, const usage::SourceReadings*& readings) const;
  Status drain(framework::Handle& h, std::vector<nodeusage::NodeUsage>& nodes,
               const usage::SourceReadings* readings) const;

  Args args_;
  UsageChoice usage_;
  std::vector<api::Symbol> tracked_;
};

framework::PluginRegistration registration();

using nodeusage::formatPercent;

}  // namespace kdesched::plugins::lownodeutilization
