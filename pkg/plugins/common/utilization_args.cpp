#include "pkg/plugins/common/utilization_args.h"

namespace kdesched::plugins::nodeusage {

Status validateThresholds(const policy::ArgsReader& r, const std::string& field, const policy::ResourceThresholds& t,
                          const std::string& prefix) {
  if (t.empty()) return r.error(field, prefix + "no resource threshold is configured");
  // A reader over no node, only to build `<field>.<resource>` paths with the usual quoting.
  policy::ArgsReader at(policy::RawArgs{.path = r.pathOf(field)});
  for (const auto& [resource, percent] : t) {
    if (resource.empty()) return r.error(field, prefix + "a resource name is empty");
    if (percent < 0 || percent > 100) return at.error(resource, prefix + resource + " threshold not in [0, 100] range");
  }
  return Status::ok();
}

Status readEvictableNamespaces(policy::ArgsReader& r, std::vector<std::string>& include,
                               std::vector<std::string>& exclude) {
  return r.readObject("evictableNamespaces", [&](policy::ArgsReader& nr) -> Status {
    std::optional<std::vector<std::string>> in, ex;
    KD_TRY(nr.readStringList("include", in));
    KD_TRY(nr.readStringList("exclude", ex));
    include = in.value_or(std::vector<std::string>{});
    exclude = ex.value_or(std::vector<std::string>{});
    return Status::ok();
  });
}

Status checkEvictableNamespaces(const policy::ArgsReader& r, const std::vector<std::string>& include) {
  if (include.empty()) return Status::ok();
  return policy::ArgsReader(policy::RawArgs{.path = r.pathOf("evictableNamespaces")})
      .error("include", "only Exclude namespaces can be set, inclusion is not supported");
}

Status rejectMetricsUtilization(const policy::ArgsReader& r, const policy::RawArgs& metrics) {
  if (!metrics.isSet()) return Status::ok();
  return r.error("metricsUtilization",
                 "upstream v0.36's HighNodeUtilization has no metricsUtilization (it always measures pod requests; "
                 "only LowNodeUtilization balances by measured usage); remove it");
}

}  // namespace kdesched::plugins::nodeusage
