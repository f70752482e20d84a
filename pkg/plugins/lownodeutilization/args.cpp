#include "pkg/plugins/lownodeutilization/args.h"

namespace kdesched::plugins::lownodeutilization {
namespace {

// Upstream's validateThresholds, with its messages; `field` is the args key the map was read from,
// which upstream also names as the message prefix ("thresholds config is not valid: ...").
Status validateThresholds(const policy::ArgsReader& r, const std::string& field, const policy::ResourceThresholds& t) {
  const std::string prefix = field + " config is not valid: ";
  if (t.empty()) return r.error(field, prefix + "no resource threshold is configured");
  // A reader over no node, only to build `<field>.<resource>` paths with the usual quoting.
  policy::ArgsReader at(policy::RawArgs{.path = r.pathOf(field)});
  for (const auto& [resource, percent] : t) {
    if (percent < 0 || percent > 100) return at.error(resource, prefix + resource + " threshold not in [0, 100] range");
  }
  return Status::ok();
}

// The first resource (by name) one map has and the other lacks, or "".
std::string firstMissing(const policy::ResourceThresholds& from, const policy::ResourceThresholds& in) {
  for (const auto& [resource, percent] : from)
    if (!in.count(resource)) return resource;
  return "";
}

}  // namespace

Result<Args> decodeArgs(const policy::RawArgs& raw) {
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

  // Read by hand rather than with readNamespaces: upstream rejects any include list here with its
  // own message, before (and instead of) the shared include/exclude check.
  std::vector<std::string> include;
  KD_TRY(r.readObject("evictableNamespaces", [&](policy::ArgsReader& nr) -> Status {
    std::optional<std::vector<std::string>> in, ex;
    KD_TRY(nr.readStringList("include", in));
    KD_TRY(nr.readStringList("exclude", ex));
    include = in.value_or(std::vector<std::string>{});
    a.excludedNamespaces = ex.value_or(std::vector<std::string>{});
    return Status::ok();
  }));

  KD_TRY(r.readObject("evictionLimits",
                      [&](policy::ArgsReader& lr) -> Status { return lr.readUint32("node", a.evictionLimitNode); }));

  policy::RawArgs metrics;
  KD_TRY(r.readRaw("metricsUtilization", metrics));
  KD_TRY(r.finish());
  // Silently falling back to requests would balance on numbers the operator did not ask for.
  if (metrics.isSet())
    return r.error("metricsUtilization",
                   "metricsUtilization is not supported yet by kdesched (usage is computed from pod requests); "
                   "remove it to balance on requests");

  // Upstream's validation order: namespaces, thresholds, targetThresholds, then the pair.
  if (!include.empty())
    return policy::ArgsReader(policy::RawArgs{.path = r.pathOf("evictableNamespaces")})
        .error("include", "only Exclude namespaces can be set, inclusion is not supported");
  KD_TRY(validateThresholds(r, "thresholds", a.thresholds));
  KD_TRY(validateThresholds(r, "targetThresholds", a.targetThresholds));
  if (std::string m = firstMissing(a.thresholds, a.targetThresholds); !m.empty())
    return r.error("targetThresholds", "thresholds and targetThresholds configured different resources (" + m +
                                           " is not in targetThresholds)");
  if (std::string m = firstMissing(a.targetThresholds, a.thresholds); !m.empty())
    return r.error("thresholds",
                   "thresholds and targetThresholds configured different resources (" + m + " is not in thresholds)");
  if (!a.useDeviationThresholds) {
    policy::ArgsReader at(policy::RawArgs{.path = r.pathOf("thresholds")});
    for (const auto& [resource, percent] : a.thresholds)
      if (percent > a.targetThresholds.at(resource))
        return at.error(resource, "thresholds' " + resource + " percentage is greater than targetThresholds'");
  }
  return a;
}

}  // namespace kdesched::plugins::lownodeutilization
