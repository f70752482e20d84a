#include "pkg/engine/engine.h"

#include "pkg/plugins/registry.h"

namespace kdesched::engine {
namespace {

Result<Engine> build(Result<policy::DeschedulerPolicy> pol, const framework::BuildContext& ctx) {
  if (!pol.isOk()) return pol.status();
  framework::Registry registry;
  plugins::registerDefaultPlugins(registry);
  Engine e;
  e.policy = std::move(pol.value());
  auto profiles = framework::buildProfiles(e.policy, registry, ctx);
  if (!profiles.isOk()) return profiles.status();
  e.profiles = std::move(profiles.value());
  auto extension = policy::decodeExtension(e.policy.extension);
  if (!extension.isOk()) return Status::error(e.policy.sourceName + ": " + extension.error());
  e.extension = std::move(extension.value());
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
