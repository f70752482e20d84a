#include "pkg/engine/engine.h"

#include <algorithm>

#include "pkg/plugins/registry.h"
#include "pkg/policy/did_you_mean.h"

namespace kdesched::engine {
namespace {

// A budget scoped to a plugin name that does not exist would never apply: an error, like a
// misspelt plugin anywhere else in the policy.
Status checkBudgetPlugins(const policy::Extension& e, const framework::Registry& registry) {
  const std::vector<std::string> known = registry.names();
  for (std::size_t i = 0; i < e.budgets.size(); ++i)
    for (std::size_t j = 0; j < e.budgets[i].scope.plugins.size(); ++j) {
      const std::string& name = e.budgets[i].scope.plugins[j];
      if (std::find(known.begin(), known.end(), name) != known.end()) continue;
      std::string msg = "kdesched.budgets[" + std::to_string(i) + "].scope.plugins[" + std::to_string(j) +
                        "]: unknown plugin \"" + name + "\"";
      if (std::string close = policy::closestMatch(name, known); !close.empty())
        msg += " (did you mean \"" + close + "\"?)";
      return Status::error(msg);
    }
  return Status::ok();
}

// `compat: upstream` asks for upstream's decisions exactly; a kdesched-only plugin enabled there
// would make others, so the policy is refused rather than the plugin silently dropped.
Status checkKdeschedOnly(const policy::DeschedulerPolicy& pol, const policy::Extension& e,
                         const framework::Registry& registry) {
  if (!(e.compat == policy::Compat::upstream())) return Status::ok();
  for (const policy::Profile& p : pol.profiles) {
    const std::pair<const policy::PluginSet*, const char*> points[] = {{&p.plugins.deschedule, "deschedule"},
                                                                       {&p.plugins.balance, "balance"}};
    for (const auto& [set, point] : points)
      for (std::size_t k = 0; k < set->enabled.size(); ++k) {
        const framework::PluginRegistration* r = registry.find(set->enabled[k]);
        if (!r || !r->kdeschedOnly) continue;
        return Status::error(p.path + ".plugins." + point + ".enabled[" + std::to_string(k) + "]: plugin \"" + r->name +
                             "\" is kdesched-only and kdesched.compat is upstream (upstream's decisions " +
                             "exactly); remove the plugin, or the compat line");
      }
  }
  return Status::ok();
}

Result<Engine> build(Result<policy::DeschedulerPolicy> pol, const framework::BuildContext& ctx) {
  if (!pol.isOk()) return pol.status();
  framework::Registry registry;
  plugins::registerDefaultPlugins(registry);
  Engine e;
  e.policy = std::move(pol.value());
  // The extension holds settings some plugins are built with; its errors still come after the
  // profiles' ones.
  auto extension = policy::decodeExtension(e.policy.extension);
  framework::BuildContext withExtension = ctx;
  if (extension.isOk()) {
    withExtension.podLifeTimeJitterSeconds = extension.value().podLifeTime.jitterSeconds;
    withExtension.pendingRetryInitialSeconds = extension.value().antiFlapping.backoffInitialSeconds;
    withExtension.pendingRetryMaxSeconds = extension.value().antiFlapping.backoffMaxSeconds;
  }
  auto profiles = framework::buildProfiles(e.policy, registry, withExtension);
  if (!profiles.isOk()) return profiles.status();
  e.profiles = std::move(profiles.value());
  if (!extension.isOk()) return Status::error(e.policy.sourceName + ": " + extension.error());
  e.extension = std::move(extension.value());
  if (Status s = checkBudgetPlugins(e.extension, registry); !s.isOk())
    return Status::error(e.policy.sourceName + ": " + s.message());
  if (Status s = checkKdeschedOnly(e.policy, e.extension, registry); !s.isOk())
    return Status::error(e.policy.sourceName + ": " + s.message());
  e.clock = ctx.now.clock();
  return e;
}

}  // namespace

evictor::EvictionLimits Engine::limits() const {
  return {policy.maxNoOfPodsToEvictPerNode, policy.maxNoOfPodsToEvictPerNamespace, policy.maxNoOfPodsToEvictTotal};
}

framework::CycleResult Engine::runCycle(const cluster::Snapshot& snapshot, evictor::EvictionChain& chain,
                                        framework::CycleObserver* observer, const framework::CycleScope& scope,
                                        const usage::ClusterUsage* usage) const {
  return framework::runCycle(profiles, snapshot, policy.nodeSelectorParsed, chain, *clock, observer, scope,
                             extension.compat, usage);
}

Result<Engine> buildEngine(const std::string& policyPath, const framework::BuildContext& ctx) {
  return build(policy::loadPolicyFile(policyPath), ctx);
}

Result<Engine> buildEngineFromText(const std::string& yaml, const std::string& sourceName,
                                   const framework::BuildContext& ctx) {
  return build(policy::parsePolicy(yaml, sourceName), ctx);
}

}  // namespace kdesched::engine
