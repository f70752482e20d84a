// Runs a policy (YAML text) over an in-memory snapshot through the real engine and plan sink.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pkg/engine/engine.h"
#include "pkg/evictor/evictor.h"

namespace kdesched::testing {

struct PlanOutcome {
  std::vector<std::string> evicted;  // "namespace/name" in eviction order
  std::vector<std::string> reasons;  // parallel to evicted
  std::vector<std::string> refused;  // "namespace/name by <who>"
  std::vector<std::string> refusedDetails;
  framework::CycleResult cycle;
};

inline Result<engine::Engine> engineFor(const std::string& policyYaml, api::Timestamp now = 100000) {
  framework::BuildContext ctx;
  ctx.now = framework::WallSeconds::pinned(now);
  ctx.priorityClassValue = [](const std::string& name) -> Result<std::int32_t> {
    if (name == "high") return 1000;
    if (name == "system-cluster-critical") return 2000000000;
    return Status::error("PriorityClass \"" + name + "\" not found");
  };
  return engine::buildEngineFromText(policyYaml, "policy.yaml", ctx);
}

// `usage`: the measured usage the cycle runs with (LowNodeUtilization's metricsUtilization).
inline PlanOutcome runPolicy(const std::string& policyYaml, const cluster::Snapshot& snapshot,
                             api::Timestamp now = 100000, const usage::ClusterUsage* usage = nullptr) {
  PlanOutcome out;
  auto engine = engineFor(policyYaml, now);
  EXPECT_TRUE(engine.isOk()) << (engine.isOk() ? "" : engine.error());
  if (!engine.isOk()) return out;
  evictor::PlanSink sink;
  evictor::EvictionChain chain(engine->limits(), sink);
  out.cycle = engine->runCycle(snapshot, chain, nullptr, {}, usage);
  for (const auto& d : sink.evictions()) {
    out.evicted.push_back(d.pod->key());
    out.reasons.push_back(d.reason);
  }
  for (const auto& r : sink.refusals()) {
    out.refused.push_back(r.wanted.pod->key() + " by " + r.result.by);
    out.refusedDetails.push_back(r.result.detail);
  }
  return out;
}

// A one-profile policy enabling `plugin` at `point` with the given args (YAML, indented 10) and
// DefaultEvictor args (YAML, indented 10); top-level extra lines (limits) prepended.
inline std::string policyWith(const std::string& plugin, const std::string& point, const std::string& pluginArgs = "",
                              const std::string& evictorArgs = "", const std::string& topLevel = "") {
  std::string y = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n" + topLevel +
                  "profiles:\n- name: test\n  pluginConfig:\n  - name: DefaultEvictor\n";
  if (!evictorArgs.empty()) y += "    args:\n" + evictorArgs;
  y += "  - name: " + plugin + "\n";
  if (!pluginArgs.empty()) y += "    args:\n" + pluginArgs;
  y += "  plugins:\n    " + point + ":\n      enabled: [" + plugin + "]\n";
  return y;
}

}  // namespace kdesched::testing
