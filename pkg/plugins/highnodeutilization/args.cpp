#include "pkg/plugins/highnodeutilization/args.h"

#include "pkg/plugins/common/utilization_args.h"

namespace kdesched::plugins::highnodeutilization {

Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<policy::ResourceThresholds> thresholds;
  KD_TRY(r.readResourceThresholds("thresholds", thresholds));
  a.thresholds = thresholds.value_or(policy::ResourceThresholds{});
  std::optional<std::int64_t> numberOfNodes;
  KD_TRY(r.readInt64("numberOfNodes", numberOfNodes));
  a.numberOfNodes = numberOfNodes.value_or(0);
  std::optional<std::vector<std::string>> modes;
  KD_TRY(r.readStringList("evictionModes", modes));
  std::vector<std::string> include;
  KD_TRY(nodeusage::readEvictableNamespaces(r, include, a.excludedNamespaces));
  KD_TRY(nodeusage::readMetricsUtilization(r, a.metricsUtilization));
  KD_TRY(r.finish());

  // Upstream's validation order: namespaces, thresholds, then eviction modes.
  KD_TRY(nodeusage::checkEvictableNamespaces(r, include));
  KD_TRY(nodeusage::validateThresholds(r, "thresholds", a.thresholds, "", warnings));
  const std::vector<std::string> listed = modes.value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < listed.size(); ++i) {
    if (listed[i] != kOnlyThresholdingResources)
      return r.error("evictionModes[" + std::to_string(i) + "]", "invalid eviction mode " + listed[i]);
    a.onlyThresholdingResources = true;
  }
  if (a.metricsUtilization) KD_TRY(nodeusage::validateMetricsUtilization(r, *a.metricsUtilization));
  return a;
}

}  // namespace kdesched::plugins::highnodeutilization
