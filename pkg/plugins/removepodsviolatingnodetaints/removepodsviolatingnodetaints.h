// Upstream: RemovePodsViolatingNodeTaints (plugins/removepodsviolatingnodetaints/).
// A deschedule plugin: evicts pods that do not tolerate a NoSchedule (and, with
// includePreferNoSchedule, PreferNoSchedule) taint of their node, typically one added after the
// pod was scheduled. Toleration matching is the scheduler's (api::toleratesTaint).
#pragma once

#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/removepodsviolatingnodetaints/args.h"

namespace kdesched::plugins::removepodsviolatingnodetaints {

class RemovePodsViolatingNodeTaints : public framework::DeschedulePlugin {
 public:
  explicit RemovePodsViolatingNodeTaints(Args args) : args_(std::move(args)) {}
  std::string_view name() const override { return kName; }
  Status deschedule(framework::Handle& h) override;

 private:
  Args args_;
};

framework::PluginRegistration registration();

// `key=value:Effect`, or `key:Effect` for a taint without a value (as kubectl prints taints).
std::string describeTaint(const api::Taint& taint);

}  // namespace kdesched::plugins::removepodsviolatingnodetaints
