// Upstream: RemoveDuplicates (plugins/removeduplicates/).
// A balance plugin: pods of one owner running the same images are duplicates when several share a
// node; it evicts the extras on nodes holding more than their share, the share being the owner's
// pod count over the nodes those pods could run on (their taints, nodeSelector and required node
// affinity, through the scheduler's predicates in pkg/api/scheduling.h).
#pragma once

#include <string>

#include "pkg/framework/registry.h"
#include "pkg/plugins/removeduplicates/args.h"

namespace kdesched::plugins::removeduplicates {

class RemoveDuplicates : public framework::BalancePlugin {
 public:
  explicit RemoveDuplicates(Args args) : args_(std::move(args)) {}
  std::string_view name() const override { return kName; }
  Status balance(framework::Handle& h) override;

 private:
  Args args_;
};

framework::PluginRegistration registration();

}  // namespace kdesched::plugins::removeduplicates
