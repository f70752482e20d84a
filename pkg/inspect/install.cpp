#include "pkg/inspect/install.h"

#include <nlohmann/json.hpp>

namespace kdesched::inspect {
namespace {

using Json = nlohmann::json;

constexpr const char* kPolicyKey = "policy.yaml";

Result<Json> getJson(kube::Client& client, const std::string& path, const std::string& what) {
  auto res = client.get(path);
  if (!res.isOk()) return Status::error("cannot read " + what + ": " + res.error().describe());
  Json j = Json::parse(res->body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error("cannot read " + what + ": the answer is not JSON");
  return j;
}

Result<Json> listChartObjects(kube::Client& client, const InstallQuery& q, const std::string& collection,
                              const std::string& what) {
  return getJson(
      client,
      collection + "/namespaces/" + q.ns + "/" + what + "?labelSelector=" + kube::encodeQueryValue(chartSelector(q)),
      what + " in namespace " + q.ns);
}

std::string str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const Json& at(const Json& j, std::initializer_list<const char*> path) {
  static const Json kNull;
  const Json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(k);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

std::vector<std::string> containerArgs(const Json& podSpec) {
  std::vector<std::string> args;
  const Json& containers = at(podSpec, {"containers"});
  if (!containers.is_array() || containers.empty()) return args;
  for (const char* field : {"command", "args"}) {
    const Json& list = at(containers[0], {field});
    if (!list.is_array()) continue;
    for (const Json& a : list)
      if (a.is_string()) args.push_back(a.get<std::string>());
  }
  return args;
}

int intOr(const Json& j, int fallback) { return j.is_number_integer() ? j.get<int>() : fallback; }

}  // namespace

std::string chartSelector(const InstallQuery& q) {
  std::string s = "app.kubernetes.io/name in (kdesched,descheduler)";
  if (!q.release.empty()) s += ",app.kubernetes.io/instance=" + q.release;
  return s;
}

std::string describeQuery(const InstallQuery& q) {
  return "labelled app.kubernetes.io/name=kdesched (or descheduler)" +
         (q.release.empty() ? std::string() : " and app.kubernetes.io/instance=" + q.release) + " in namespace " + q.ns;
}

Result<InstalledPolicy> findInstalledPolicy(kube::Client& client, const InstallQuery& q) {
  auto list = listChartObjects(client, q, "/api/v1", "configmaps");
  if (!list.isOk()) return list.status();
  std::vector<InstalledPolicy> found;
  const Json& items = at(*list, {"items"});
  if (items.is_array())
    for (const Json& cm : items) {
      const Json& policy = at(cm, {"data", kPolicyKey});
      if (!policy.is_string()) continue;
      found.push_back({policy.get<std::string>(),
                       "ConfigMap " + q.ns + "/" + str(at(cm, {"metadata"}), "name") + " (" + kPolicyKey + ")"});
    }
  if (found.size() == 1) return std::move(found[0]);
  if (found.empty())
    return Status::error("no DeschedulerPolicy found: no ConfigMap with a " + std::string(kPolicyKey) + " key " +
                         describeQuery(q) +
                         " (where the chart helm/kdesched puts it); pass --kdesched-namespace NAMESPACE where kdesched "
                         "is installed, or --policy-config-file FILE");
  std::string names;
  for (const auto& f : found) names += (names.empty() ? "" : ", ") + f.source;
  return Status::error("several DeschedulerPolicies found " + describeQuery(q) + ": " + names +
                       "; pick one with --release NAME, or pass --policy-config-file FILE");
}

void readDaemonArgs(const std::vector<std::string>& args, Workload& w) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    const bool hasNext = i + 1 < args.size() && args[i + 1].rfind("-", 0) != 0;
    if (auto eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag.resize(eq);
    } else if (flag != "--leader-elect" && flag != "--plain-http" && hasNext) {
      value = args[++i];
    }
    if (flag == "--leader-elect") w.leaderElect = value.empty() || value == "true";
    if (flag == "--plain-http") w.plainHttp = value.empty() || value == "true";
    if (flag == "--leader-elect-resource-name" && !value.empty()) w.leaseName = value;
    if (flag == "--leader-elect-resource-namespace" && !value.empty()) w.leaseNs = value;
    if (flag == "--secure-port" && !value.empty()) w.securePort = std::atoi(value.c_str());
  }
}

Result<std::optional<Workload>> findWorkload(kube::Client& client, const InstallQuery& q) {
  auto deployments = listChartObjects(client, q, "/apis/apps/v1", "deployments");
  if (!deployments.isOk()) return deployments.status();
  const Json& items = at(*deployments, {"items"});
  if (items.is_array() && !items.empty()) {
    const Json& d = items[0];
    Workload w;
    w.kind = "Deployment";
    w.ns = q.ns;
    w.name = str(at(d, {"metadata"}), "name");
    w.replicas = intOr(at(d, {"spec", "replicas"}), 1);
    w.readyReplicas = intOr(at(d, {"status", "readyReplicas"}), 0);
    readDaemonArgs(containerArgs(at(d, {"spec", "template", "spec"})), w);
    return std::optional<Workload>(std::move(w));
  }
  auto cronJobs = listChartObjects(client, q, "/apis/batch/v1", "cronjobs");
  if (!cronJobs.isOk()) return cronJobs.status();
  const Json& jobs = at(*cronJobs, {"items"});
  if (!jobs.is_array() || jobs.empty()) return std::optional<Workload>();
  const Json& c = jobs[0];
  Workload w;
  w.kind = "CronJob";
  w.ns = q.ns;
  w.name = str(at(c, {"metadata"}), "name");
  w.lastScheduleTime = str(at(c, {"status"}), "lastScheduleTime");
  w.lastSuccessTime = str(at(c, {"status"}), "lastSuccessfulTime");
  readDaemonArgs(containerArgs(at(c, {"spec", "jobTemplate", "spec", "template", "spec"})), w);
  return std::optional<Workload>(std::move(w));
}

}  // namespace kdesched::inspect
