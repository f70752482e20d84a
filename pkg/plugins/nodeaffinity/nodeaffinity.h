// Upstream: RemovePodsViolatingNodeAffinity (plugins/removepodsviolatingnodeaffinity/).
// A deschedule plugin: evicts pods whose required node affinity no longer matches their node (when
// another node fits), or whose preferred node affinity scores strictly higher on another node.
#pragma once

#include <string>
#include <vector>

#include "pkg/framework/registry.h"
#include "pkg/plugins/nodeaffinity/args.h"

namespace kdesched::plugins::nodeaffinity {

class RemovePodsViolatingNodeAffinity : public framework::DeschedulePlugin {
 public:
  explicit RemovePodsViolatingNodeAffinity(Args args) : args_(std::move(args)) {}
  std::string_view name() const override { return kName; }
  Status deschedule(framework::Handle& h) override;

 private:
  Args args_;
};

framework::PluginRegistration registration();

// `kubernetes.io/hostname In [node2] AND disk Exists` OR ... , for reasons.
std::string describeNodeSelector(const api::NodeSelector& s);

}  // namespace kdesched::plugins::nodeaffinity
