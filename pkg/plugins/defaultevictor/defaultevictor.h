// Upstream: DefaultEvictor (plugins/defaultevictor/).
// The single home of cross-cutting "may this pod go" policy (Filter and PreEvictionFilter), with
// upstream's checks in upstream's order (defaultevictor.go there: Filter runs the evict and no-evict
// annotations, mirror, static and terminating pods, then the protections and constraints.go's label
// selector, minReplicas and minPodAge; PreEvictionFilter runs nodeFit, then the namespace label selector).
#pragma once

#include <set>

#include "pkg/framework/registry.h"
#include "pkg/plugins/defaultevictor/args.h"

namespace kdesched::plugins::defaultevictor {

class DefaultEvictor : public framework::FilterPlugin, public framework::PreEvictionFilterPlugin {
 public:
  DefaultEvictor(Args args, std::int32_t priorityThreshold, framework::WallSeconds now);

  std::string_view name() const override { return kName; }
  framework::FilterResult filter(const api::Pod& pod, const framework::Handle& h) const override;
  framework::FilterResult preEvictionFilter(const api::Pod& pod, const framework::Handle& h) const override;

  const Args& args() const { return args_; }
  std::int32_t priorityThreshold() const { return priorityThreshold_; }

 private:
  bool on(const char* protection) const { return protections_.count(protection) != 0; }
  Args args_;
  std::set<std::string> protections_;
  std::int32_t priorityThreshold_;
  std::optional<api::LabelSelector> nodeSelector_;
  std::string badNodeSelector_;  // why nodeSelector does not parse: with nodeFit, every pod fails on it
  framework::WallSeconds now_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::defaultevictor
