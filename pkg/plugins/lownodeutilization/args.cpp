#include "pkg/plugins/lownodeutilization/args.h"

#include <optional>

#include "pkg/plugins/common/utilization_args.h"

namespace kdesched::plugins::lownodeutilization {
namespace {

// The first resource of `from` that `in` lacks. Optional, not "": an empty resource name is a key
// like any other here (it used to slip through as "none missing" and abort on map::at).
std::optional<std::string> firstMissing(const policy::ResourceThresholds& from, const policy::ResourceThresholds& in) {
  for (const auto& [resource, percent] : from)
    if (!in.count(resource)) return resource;
  return std::nullopt;
}

// A resource name in a message: the empty one quoted, so it shows.
std::string shown(const std::string& resource) { return resource.empty() ? "\"\"" : resource; }

}  // namespace

Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<policy::ResourceThresholds> thresholds, targetThresholds;
  KD_TRY(r.readResourceThresholds("thresholds", thresholds));
  KD_TRY(r.readResourceThresholds("targetThresholds", targetThresholds));
  a.thresholds = thresholds.value_or(policy::ResourceThresholds{});
  a.targetThresholds = targetThresholds.value_or(policy::ResourceThresholds{});

  std::optional<bool> deviation;
  KD_TRY(r.readBool("useDeviationThresholds", deviation));
  a.useDeviationThresholds = deviation.value_or(false);
  std::optional<std::int64_t> numberOfNodes;
  KD_TRY(r.readInt64("numberOfNodes", numberOfNodes));
  a.numberOfNodes = numberOfNodes.value_or(0);

  std::vector<std::string> include;
  KD_TRY(nodeusage::readEvictableNamespaces(r, include, a.excludedNamespaces));

  KD_TRY(r.readObject("evictionLimits",
                      [&](policy::ArgsReader& lr) -> Status { return lr.readUint32("node", a.evictionLimitNode); }));

  KD_TRY(nodeusage::readMetricsUtilization(r, a.metricsUtilization));
  KD_TRY(r.finish());

  // Upstream's validation order: namespaces, thresholds, targetThresholds, then the pair.
  KD_TRY(nodeusage::checkEvictableNamespaces(r, include));
  // Upstream names the map as the message prefix ("thresholds config is not valid: ...").
  KD_TRY(nodeusage::validateThresholds(r, "thresholds", a.thresholds, "thresholds config is not valid: ", warnings));
  KD_TRY(nodeusage::validateThresholds(r, "targetThresholds", a.targetThresholds,
                                       "targetThresholds config is not valid: ", warnings));
  if (auto m = firstMissing(a.thresholds, a.targetThresholds))
    return r.error("targetThresholds", "thresholds and targetThresholds configured different resources (" + shown(*m) +
                                           " is not in targetThresholds)");
  if (auto m = firstMissing(a.targetThresholds, a.thresholds))
    return r.error("thresholds", "thresholds and targetThresholds configured different resources (" + shown(*m) +
                                     " is not in thresholds)");
  if (!a.useDeviationThresholds) {
    policy::ArgsReader at(policy::RawArgs{.path = r.pathOf("thresholds")});
    for (const auto& [resource, percent] : a.thresholds)
      if (percent > a.targetThresholds.at(resource))
        return at.error(resource, "thresholds' " + resource + " percentage is greater than targetThresholds'");
  }
  if (a.metricsUtilization) KD_TRY(nodeusage::validateMetricsUtilization(r, *a.metricsUtilization));
  return a;
}

}  // namespace kdesched::plugins::lownodeutilization
