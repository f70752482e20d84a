// The decision engine every mode shares: a policy, its built profiles (and its `kdesched:` block),
// and one cycle over a snapshot through an eviction chain.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pkg/evictor/evictor.h"
#include "pkg/framework/cycle.h"
#include "pkg/framework/profile.h"
#include "pkg/policy/extension.h"
#include "pkg/policy/policy.h"

namespace kdesched::engine {

struct Engine {
  policy::DeschedulerPolicy policy;
  std::vector<framework::Profile> profiles;
  policy::Extension extension;   // triggers, anti-flapping (the daemon's) and compat switches (every mode)
  std::shared_ptr<Clock> clock;  // times cycles and plugin runs

  evictor::EvictionLimits limits() const;
  // `usage`: the measured usage for the plugins that balance by it (see usageNeeds()).
  framework::CycleResult runCycle(const cluster::Snapshot& snapshot, evictor::EvictionChain& chain,
                                  framework::CycleObserver* observer = nullptr, const framework::CycleScope& scope = {},
                                  const usage::ClusterUsage* usage = nullptr) const;
  // What the policy's plugins need from the metrics sources (empty: every plugin uses requests).
  usage::Needs usageNeeds() const { return framework::usageNeeds(profiles); }
  // Whether the cache must keep pod status conditions (cluster::Store::keepPodConditions).
  bool readsPodConditions() const { return framework::readsPodConditions(profiles); }
};

// Loads, validates and builds the policy with every registered plugin, and decodes its `kdesched:`
// block. Errors are one per line, each naming the file and the field.
Result<Engine> buildEngine(const std::string& policyPath, const framework::BuildContext& ctx);
Result<Engine> buildEngineFromText(const std::string& yaml, const std::string& sourceName,
                                   const framework::BuildContext& ctx);

}  // namespace kdesched::engine
