// Upstream: RemovePodsHavingTooManyRestarts (plugins/removepodshavingtoomanyrestarts/).
// A deschedule plugin: evicts pods whose containers restarted podRestartThreshold times or more
// in total, most restarts first on each node: a pod crash-looping where it is may do better
// elsewhere (a bad node, a noisy neighbour), and its controller recreates it.
#pragma once

#include <cstdint>
#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/removepodshavingtoomanyrestarts/args.h"

namespace kdesched::plugins::removepodshavingtoomanyrestarts {

class RemovePodsHavingTooManyRestarts : public framework::DeschedulePlugin {
 public:
  explicit RemovePodsHavingTooManyRestarts(Args args) : args_(std::move(args)) {}
  std::string_view name() const override { return kName; }
  Status deschedule(framework::Handle& h) override;

  // Restarts of the regular containers, plus the init containers' with includingInitContainers.
  std::int64_t restarts(const api::Pod& pod) const;
  // The state of `states` the pod is in ("" when states is empty or none matches).
  std::string_view matchingState(const api::Pod& pod) const;
  // Why the pod is in none of the states: its phase, and that no waiting reason is listed.
  std::string notInStates(const api::Pod& pod) const;
  // The plugin's verdict on a pod that restarted `restarts` times.
  framework::Verdict judge(const api::Pod& pod, std::int64_t restarts) const;

 private:
  Args args_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::removepodshavingtoomanyrestarts
