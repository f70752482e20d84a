#include "pkg/plan/usage_input.h"

#include <fstream>
#include <sstream>

#include "pkg/usage/decode.h"

namespace kdesched::plan {
namespace {

// A saved answer is a few hundred bytes per node.
constexpr std::size_t kMaxPrometheusBytes = std::size_t{64} << 20;

std::string consumersOf(const usage::Needs& needs, usage::Source source) {
  std::string out;
  for (const auto& c : needs.consumers)
    if (c.source == source) out += (out.empty() ? "" : ", ") + c.plugin + " in profile \"" + c.profile + "\"";
  return out;
}

Status checkMetricsServer(const UsageInput& in, const usage::Needs& needs) {
  const std::string who = consumersOf(needs, usage::Source::KubernetesMetrics);
  auto missing = [&](const char* kind, const char* path) {
    if (in.live)
      return Status::error("the policy balances by metrics-server usage (" + who + ") and " + in.snapshotPath +
                           " answered no " + kind + " (/apis/metrics.k8s.io/v1beta1/" + path +
                           "): has metrics-server scraped the nodes yet? (no plan falls back to requests)");
    return Status::error(in.snapshotPath + ": the policy balances by metrics-server usage (" + who +
                         ") and the snapshot has no " + kind + ": add the output of `kubectl get --raw " +
                         "/apis/metrics.k8s.io/v1beta1/" + path + "` to it (no plan falls back to requests)");
  };
  if (in.metrics.nodes.empty()) return missing("NodeMetrics", "nodes");
  if (in.metrics.pods.empty()) return missing("PodMetrics", "pods");
  return Status::ok();
}

Result<usage::SourceReadings> readPrometheus(const UsageInput& in, const usage::Needs& needs) {
  const std::vector<std::string> queries = needs.prometheusQueries();
  const std::string who = consumersOf(needs, usage::Source::Prometheus);
  if (in.prometheusResultPath.empty())
    return Status::error("the policy balances by the Prometheus query " + queries.front() + " (" + who +
                         "): give its answer with --prometheus-result FILE (the JSON body of /api/v1/query)");
  if (queries.size() > 1) {
    std::string list;
    for (const auto& q : queries) list += (list.empty() ? "" : "; ") + q;
    return Status::error("--prometheus-result answers one query, and the policy has " + std::to_string(queries.size()) +
                         ": " + list);
  }
  std::ifstream file(in.prometheusResultPath, std::ios::binary);
  if (!file) return Status::error(in.prometheusResultPath + ": cannot open the Prometheus answer");
  std::ostringstream text;
  text << file.rdbuf();
  if (text.str().size() > kMaxPrometheusBytes)
    return Status::error(in.prometheusResultPath + ": larger than 64 MiB; is this a Prometheus query answer?");
  usage::SourceReadings r;
  r.source = usage::Source::Prometheus;
  r.origin = "Prometheus";
  if (Status st = usage::decodePrometheusAnswer(text.str(), r); !st.isOk())
    return Status::error(in.prometheusResultPath + ": " + st.message());
  return r;
}

}  // namespace

Result<usage::ClusterUsage> planUsage(UsageInput in, const usage::Needs& needs, std::vector<std::string>& warnings) {
  usage::ClusterUsage out;
  const std::vector<std::string> queries = needs.prometheusQueries();
  if (!in.prometheusResultPath.empty() && queries.empty())
    return Status::error(
        "--prometheus-result: no plugin of the policy balances by a Prometheus query "
        "(metricsUtilization.source: Prometheus)");
  if (needs.kubernetesMetrics()) {
    KD_TRY(checkMetricsServer(in, needs));
    // Each note names its object; not the file, so a live plan and its saved snapshot say the same.
    for (const auto& n : in.metrics.notes) warnings.push_back(n);
    in.metrics.source = usage::Source::KubernetesMetrics;
    in.metrics.origin = "metrics-server";
    out.kubernetesMetrics = std::move(in.metrics);
  }
  if (!queries.empty()) {
    auto prom = readPrometheus(in, needs);
    if (!prom.isOk()) return prom.status();
    for (const auto& n : prom->notes) warnings.push_back(in.prometheusResultPath + ": " + n);
    out.prometheus.emplace(queries.front(), std::move(*prom));
  }
  // A snapshot is judged as of when it was taken, unless --now says otherwise.
  out.asOf = in.now ? *in.now : out.newestSample().value_or(0);
  return out;
}

}  // namespace kdesched::plan
