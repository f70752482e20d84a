// Building profiles from a DeschedulerPolicy with upstream's rules: DefaultEvictor injected into
// filter and preEvictionFilter, every enabled plugin needs a pluginConfig entry, one instance per
// plugin per profile, unknown names listed with the known ones.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pkg/framework/registry.h"

namespace kdesched::framework {

struct Profile {
  std::string name;
  std::vector<std::unique_ptr<Plugin>> instances;
  std::vector<DeschedulePlugin*> deschedule;
  std::vector<BalancePlugin*> balance;
  std::vector<FilterPlugin*> filters;
  std::vector<PreEvictionFilterPlugin*> preEvictionFilters;
  std::vector<DeadlinePlugin*> deadlines;  // the deschedule plugins that are also DeadlinePlugins
  // Names of enabled deschedule and balance plugins (for metrics at zero from the start).
  std::vector<std::string> strategyNames() const;
};

inline constexpr const char* kDefaultEvictor = "DefaultEvictor";

// Applies upstream's defaulting to `policy` (in place), validates it and builds every profile.
// All errors are collected, each prefixed with the policy source and field path, and joined by
// newlines.
Result<std::vector<Profile>> buildProfiles(policy::DeschedulerPolicy& policy, const Registry& registry,
                                           const BuildContext& ctx);

}  // namespace kdesched::framework
