#include "pkg/plugins/common/utilization_args.h"

namespace kdesched::plugins::nodeusage {

Status validateThresholds(const policy::ArgsReader& r, const std::string& field, const policy::ResourceThresholds& t,
                          const std::string& prefix, policy::Warnings& warnings) {
  if (t.empty()) return r.error(field, prefix + "no resource threshold is configured");
  // A reader over no node, only to build `<field>.<resource>` paths with the usual quoting.
  policy::ArgsReader at(policy::RawArgs{.path = r.pathOf(field)});
  for (const auto& [resource, percent] : t) {
    if (resource.empty())
      warnings.push_back(r.pathOf(field) +
                         ": a resource name is empty; no node has such a resource, so, as with "
                         "upstream, the plugin finds no room to move pods to and evicts nothing");
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

Status readMetricsUtilization(policy::ArgsReader& r, std::optional<MetricsUtilization>& out) {
  bool present = false;
  MetricsUtilization m;
  KD_TRY(r.readObject(
      "metricsUtilization",
      [&](policy::ArgsReader& mr) -> Status {
        std::optional<bool> server;
        std::optional<std::string> source;
        KD_TRY(mr.readBool("metricsServer", server));
        KD_TRY(mr.readString("source", source));
        m.metricsServer = server.value_or(false);
        m.source = source.value_or("");
        return mr.readObject(
            "prometheus",
            [&](policy::ArgsReader& pr) -> Status {
              std::optional<std::string> query;
              KD_TRY(pr.readString("query", query));
              m.prometheusQuery = query.value_or("");
              return Status::ok();
            },
            &m.prometheusSet);
      },
      &present));
  if (present) out = std::move(m);
  return Status::ok();
}

Status validateMetricsUtilization(const policy::ArgsReader& r, const MetricsUtilization& m) {
  policy::ArgsReader at(policy::RawArgs{.path = r.pathOf("metricsUtilization")});
  if (m.source == "KubernetesMetrics" && m.metricsServer)
    return at.error("source", "it is not allowed to set both \"KubernetesMetrics\" source and metricsServer");
  if (m.source == "KubernetesMetrics" && m.prometheusSet)
    return at.error("prometheus",
                    "prometheus configuration is not allowed to set when source is set to \"KubernetesMetrics\"");
  if (m.source == "Prometheus" && m.prometheusQuery.empty()) {
    const std::string message = "prometheus query is required when metrics source is set to \"Prometheus\"";
    if (!m.prometheusSet) return at.error("prometheus", message);
    return policy::ArgsReader(policy::RawArgs{.path = at.pathOf("prometheus")}).error("query", message);
  }
  return Status::ok();
}

}  // namespace kdesched::plugins::nodeusage
