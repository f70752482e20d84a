#include "pkg/daemon/kube_eviction_api.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <ctime>
#include <random>

namespace kdesched::daemon {
namespace {

std::string rfc3339Now(bool micros) {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  if (micros) {
    long long us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, us);
  } else {
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec);
  }
  return buf;
}

}  // namespace

evictor::ApiAnswer KubeEvictionApi::evict(const evictor::EvictionRequest& r) {
  nlohmann::json body = {{"apiVersion", "policy/v1"},
                         {"kind", "Eviction"},
                         {"metadata",
                          {{"name", r.name},
                           {"namespace", r.ns},
                           {"annotations", {{"reason", r.reasonAnnotation}, {"requested-by", "kdesched"}}}}},
                         {"deleteOptions", {{"preconditions", {{"uid", r.uid}}}}}};
  if (r.gracePeriodSeconds) body["deleteOptions"]["gracePeriodSeconds"] = *r.gracePeriodSeconds;
  kube::RequestOptions opts;
  opts.retryThrottled = false;  // a 429 here is the evictor's decision (PDB or throttling)
  opts.cancel = cancel_;
  auto res = client_.post("/api/v1/namespaces/" + r.ns + "/pods/" + r.name + "/eviction", body.dump(), opts);
  if (res) return {res->status, "", "", false};
  const kube::ApiError& e = res.error();
  evictor::ApiAnswer a;
  a.status = e.code;
  a.reason = e.reason;
  a.message = e.code == 0 ? e.describe() : e.message;
  a.disruptionBudget =
      e.hasCause("DisruptionBudget") || (e.code == 429 && e.message.find("disruption budget") != std::string::npos);
  return a;
}

void KubeEvictionApi::recordEvent(const evictor::PodEvent& e) {
  // Per thread: Events are recorded from the eviction workers concurrently.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(rng()));
  nlohmann::json ev = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", e.podName + "." + suffix}, {"namespace", e.ns}}},
      {"involvedObject",
       {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", e.podName}, {"namespace", e.ns}, {"uid", e.podUid}}},
      {"reason", e.reason},
      {"message", e.note},
      {"type", e.type},
      {"action", e.action},
      {"source", {{"component", "kdesched"}}},
      {"reportingComponent", "kdesched"},
      {"reportingInstance", "kdesched"},
      {"firstTimestamp", rfc3339Now(false)},
      {"lastTimestamp", rfc3339Now(false)},
      {"eventTime", rfc3339Now(true)},
      {"count", 1}};
  kube::RequestOptions opts;
  opts.cancel = cancel_;
  auto res = client_.post("/api/v1/namespaces/" + e.ns + "/events", ev.dump(), opts);
  if (!res)
    spdlog::warn("msg=\"cannot record event\" pod={}/{} reason={} error=\"{}\"", e.ns, e.podName, e.reason,
                 res.error().describe());
}

}  // namespace kdesched::daemon
