#include "pkg/inspect/status.h"

#include <algorithm>
#include <cmath>

#include "pkg/api/timestamp.h"
#include "pkg/inspect/exposition.h"
#include "pkg/kube/eviction_api.h"

namespace kdesched::inspect {
namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

std::string str(const Json& j, std::initializer_list<const char*> path) {
  const Json* cur = &j;
  for (const char* k : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(k);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : std::string();
}

std::optional<double> ageOf(const std::string& rfc3339, api::Timestamp now) {
  if (rfc3339.empty()) return std::nullopt;
  auto t = api::parseTimestamp(rfc3339);
  if (!t.isOk()) return std::nullopt;
  return static_cast<double>(now - *t);
}

void readLease(kube::Client& client, api::Timestamp now, LeaseStatus& l) {
  auto res = client.get("/apis/coordination.k8s.io/v1/namespaces/" + l.ns + "/leases/" + l.name);
  if (!res.isOk()) {
    if (res.error().code == 404)
      l.absent = "no Lease " + l.ns + "/" + l.name + ": no replica has led yet";
    else
      l.error = "cannot read Lease " + l.ns + "/" + l.name + ": " + res.error().describe();
    return;
  }
  const Json j = Json::parse(res->body, nullptr, false);
  if (!j.is_object()) {
    l.error = "cannot read Lease " + l.ns + "/" + l.name + ": the answer is not JSON";
    return;
  }
  l.found = true;
  l.holder = str(j, {"spec", "holderIdentity"});
  l.renewTime = str(j, {"spec", "renewTime"});
  const Json& spec = j.contains("spec") ? j["spec"] : Json();
  if (spec.is_object() && spec.contains("leaseDurationSeconds") && spec["leaseDurationSeconds"].is_number_integer())
    l.durationSeconds = spec["leaseDurationSeconds"].get<int>();
  if (spec.is_object() && spec.contains("leaseTransitions") && spec["leaseTransitions"].is_number_integer())
    l.transitions = spec["leaseTransitions"].get<int>();
  l.ageSeconds = ageOf(l.renewTime, now);
  l.expired = l.holder.empty() || !l.ageSeconds || *l.ageSeconds > l.durationSeconds;
}

void readProxied(kube::Client& client, const std::string& path, const char* proxy, api::Timestamp now,
                 MetricsStatus& m) {
  kube::RequestOptions ro;
  ro.accept = "text/plain";
  auto res = client.get(path, ro);
  if (!res.isOk()) {
    m.error = std::string("cannot read the daemon's /metrics through the API server's ") + proxy + " (" + path +
              "): " + res.error().describe();
    return;
  }
  readMetrics(res->body, now, m);
}

// The chart's Service and the port that serves /metrics (http-metrics, else its first port).
struct MetricsService {
  std::string name, port;
};

Result<std::optional<MetricsService>> findService(kube::Client& client, const InstallQuery& q) {
  auto res =
      client.get("/api/v1/namespaces/" + q.ns + "/services?labelSelector=" + kube::encodeQueryValue(chartSelector(q)));
  if (!res.isOk()) return Status::error("cannot list services in namespace " + q.ns + ": " + res.error().describe());
  const Json j = Json::parse(res->body, nullptr, false);
  if (!j.is_object() || !j.contains("items") || !j["items"].is_array() || j["items"].empty())
    return std::optional<MetricsService>();
  const Json& svc = j["items"][0];
  MetricsService out{str(svc, {"metadata", "name"}), ""};
  if (svc.contains("spec") && svc["spec"].contains("ports") && svc["spec"]["ports"].is_array())
    for (const Json& p : svc["spec"]["ports"]) {
      const std::string name = str(p, {"name"});
      const std::string number = p.contains("port") ? p["port"].dump() : "";
      if (out.port.empty() || name == "http-metrics") out.port = name.empty() ? number : name;
    }
  return std::optional<MetricsService>(std::move(out));
}

// The leader's pod, when the Lease's holder is one in the install's namespace: its identity is
// "<hostname>_<random>", and a pod's hostname is its name. Its metrics are the ones that move: a
// Service would proxy to any ready replica, the standby's included.
std::optional<std::string> leaderPod(kube::Client& client, const InstallQuery& q, const LeaseStatus& l) {
  const std::size_t sep = l.holder.rfind('_');
  if (!l.found || l.expired || sep == std::string::npos || sep == 0) return std::nullopt;
  const std::string pod = l.holder.substr(0, sep);
  if (!client.get("/api/v1/namespaces/" + q.ns + "/pods/" + pod).isOk()) return std::nullopt;
  return pod;
}

void readMetricsThroughProxy(kube::Client& client, const StatusOptions& o, const std::optional<Workload>& w,
                             const LeaseStatus& lease, api::Timestamp now, MetricsStatus& m) {
  const std::string scheme = w && w->plainHttp ? "http" : "https";
  if (auto pod = leaderPod(client, o.install, lease)) {
    m.via = "/api/v1/namespaces/" + o.install.ns + "/pods/" + scheme + ":" + *pod + ":" +
            std::to_string(w ? w->securePort : Workload{}.securePort) + "/proxy/metrics";
    readProxied(client, m.via, "pod proxy (the Lease holder's pod)", now, m);
    return;
  }
  auto service = findService(client, o.install);
  if (!service.isOk()) {
    m.error = service.error();
    return;
  }
  if (!*service) {
    m.absent = "no Service " + describeQuery(o.install) + " (the chart makes one with service.enabled=true)";
    return;
  }
  m.via = "/api/v1/namespaces/" + o.install.ns + "/services/" + scheme + ":" + (*service)->name + ":" +
          (*service)->port + "/proxy/metrics";
  readProxied(client, m.via, "service proxy", now, m);
}

void readEvents(kube::Client& client, const StatusOptions& o, api::Timestamp now, DaemonStatus& s) {
  std::vector<EventRow> rows;
  kube::PageReader reader;
  reader.decode = [&](std::string& body, std::string& continueToken) -> Status {
    const Json j = Json::parse(body, nullptr, false);
    if (!j.is_object()) return Status::error("an Events page is not JSON");
    continueToken = str(j, {"metadata", "continue"});
    if (!j.contains("items") || !j["items"].is_array()) return Status::ok();
    for (const Json& e : j["items"]) {
      EventRow r;
      r.time = str(e, {"eventTime"});
      if (const std::string last = str(e, {"series", "lastObservedTime"}); !last.empty()) r.time = last;
      if (r.time.empty()) r.time = str(e, {"deprecatedLastTimestamp"});
      if (r.time.empty()) r.time = str(e, {"metadata", "creationTimestamp"});
      r.ns = str(e, {"regarding", "namespace"});
      r.pod = str(e, {"regarding", "name"});
      r.type = str(e, {"type"});
      r.reason = str(e, {"reason"});
      r.note = str(e, {"note"});
      r.instance = str(e, {"reportingInstance"});
      r.ageSeconds = ageOf(r.time, now);
      rows.push_back(std::move(r));
    }
    return Status::ok();
  };
  reader.restart = [&] { rows.clear(); };
  kube::ListOptions lo;
  lo.fieldSelector = std::string("reportingController=") + kube::kEventController;
  auto listed = client.listPages("/apis/events.k8s.io/v1/events", "events", lo, reader);
  if (!listed.isOk()) {
    s.eventsError = "cannot list Events (events.k8s.io/v1, all namespaces): " + listed.error().describe();
    return;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const EventRow& a, const EventRow& b) {
    return a.ageSeconds.value_or(1e18) < b.ageSeconds.value_or(1e18);
  });
  s.eventsTotal = rows.size();
  if (rows.size() > o.events) rows.resize(o.events);
  s.events = std::move(rows);
}

}  // namespace

bool DaemonStatus::notInstalled() const {
  return !workload && workloadError.empty() && !lease.found && lease.error.empty() && !metrics.found &&
         metrics.error.empty();
}

bool DaemonStatus::complete() const {
  return workloadError.empty() && lease.error.empty() && metrics.error.empty() && eventsError.empty();
}

void readMetrics(std::string_view exposition, api::Timestamp now, MetricsStatus& m) {
  const std::vector<Sample> samples = parseExposition(exposition);
  m.found = true;
  m.cycles = sumBy(samples, "descheduler_loop_duration_seconds_count", "")[""];
  for (const Sample& s : samples) {
    if (s.name == "kdesched_last_successful_cycle_timestamp_seconds" && s.value > 0)
      m.lastCycleAgeSeconds = static_cast<double>(now) - s.value;
    if (s.name == "descheduler_build_info" && s.labels.count("AppVersion")) m.version = s.labels.at("AppVersion");
    if (s.name == "kdesched_cache_stale" && s.value > 0 && s.labels.count("resource"))
      m.staleCaches.push_back(s.labels.at("resource"));
  }
  m.evictions = sumBy(samples, "descheduler_pods_evicted_total", "result");
  m.refused = sumBy(samples, "kdesched_evictions_refused_total", "reason");
  m.suppressed = sumBy(samples, "kdesched_evictions_suppressed_total", "reason");
  m.cacheObjects = sumBy(samples, "kdesched_cache_objects", "kind");
}

DaemonStatus readStatus(kube::Client& client, const StatusOptions& options, api::Timestamp now) {
  DaemonStatus s;
  s.ns = options.install.ns;
  auto workload = findWorkload(client, options.install);
  if (workload.isOk())
    s.workload = *workload;
  else
    s.workloadError = workload.error();
  const Workload defaults;
  s.lease.ns = s.workload ? s.workload->leaseNs : defaults.leaseNs;
  s.lease.name = s.workload ? s.workload->leaseName : defaults.leaseName;
  const bool cronJob = s.workload && s.workload->kind == "CronJob";
  if (cronJob) {
    s.lease.absent = "a CronJob runs one cycle a run and holds no Lease";
    s.metrics.absent = "a CronJob's runs serve no metrics endpoint between runs";
  } else {
    if (s.workload && !s.workload->leaderElect)
      s.lease.absent = "leader election is off (the Deployment runs without --leader-elect)";
    else
      readLease(client, now, s.lease);
    readMetricsThroughProxy(client, options, s.workload, s.lease, now, s.metrics);
  }
  readEvents(client, options, now, s);
  return s;
}

std::string humanAge(double seconds) {
  if (seconds < 0) seconds = 0;
  const long long t = std::llround(std::floor(seconds));
  auto two = [](long long a, const char* ua, long long b, const char* ub) {
    return std::to_string(a) + ua + (b ? std::to_string(b) + ub : "");
  };
  if (t < 120) return std::to_string(t) + "s";
  if (t < 600) return two(t / 60, "m", t % 60, "s");
  if (t < 3 * 3600) return two(t / 60, "m", 0, "");
  if (t < 8 * 3600) return two(t / 3600, "h", (t % 3600) / 60, "m");
  if (t < 2 * 86400) return std::to_string(t / 3600) + "h";
  if (t < 8 * 86400) return two(t / 86400, "d", (t % 86400) / 3600, "h");
  return std::to_string(t / 86400) + "d";
}

}  // namespace kdesched::inspect
