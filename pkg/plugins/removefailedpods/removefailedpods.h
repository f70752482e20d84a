// Upstream: RemoveFailedPods (plugins/removefailedpods/).
// A deschedule plugin: evicts pods in phase Failed that are older than minPodLifetimeSeconds and
// match the reasons, exit codes and owner kinds the args give, so their controllers recreate them
// and the failed objects stop holding names, IPs and quota.
#pragma once

#include <optional>
#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/removefailedpods/args.h"

namespace kdesched::plugins::removefailedpods {

class RemoveFailedPods : public framework::DeschedulePlugin, public framework::DeadlinePlugin {
 public:
  RemoveFailedPods(Args args, framework::WallSeconds now) : args_(std::move(args)), now_(std::move(now)) {}
  std::string_view name() const override { return kName; }
  Status deschedule(framework::Handle& h) override;

  // A candidate when `pod` matches the args, saying why it should go ("pod failed with reason
  // OOMKilled, created 2h0m ago, ..."); else a skip naming the check it fails, with the numbers.
  // The evictor's filters are not consulted here.
  framework::Verdict judge(const api::Pod& pod, api::Timestamp now) const;
  // When a failed pod that matches the args reaches minPodLifetimeSeconds.
  std::optional<api::Timestamp> eligibleAt(const api::Pod& pod, api::Timestamp now) const override;

 private:
  Args args_;
  framework::WallSeconds now_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::removefailedpods
