#include "pkg/kube/eviction_api.h"

#include <nlohmann/json.hpp>

#include <random>

#include "pkg/base/log.h"
#include "pkg/kube/wire.h"

namespace kdesched::kube {

evictor::ApiAnswer KubeEvictionApi::evict(const evictor::EvictionRequest& r) {
  nlohmann::json body = {{"apiVersion", "policy/v1"},
                         {"kind", "Eviction"},
                         {"metadata",
                          {{"name", r.name},
                           {"namespace", r.ns},
                           {"annotations", {{"reason", r.reasonAnnotation}, {"requested-by", "kdesched"}}}}},
                         {"deleteOptions", {{"preconditions", {{"uid", r.uid}}}}}};
  if (r.gracePeriodSeconds) body["deleteOptions"]["gracePeriodSeconds"] = *r.gracePeriodSeconds;
  RequestOptions opts;
  opts.retryThrottled = false;  // a 429 here is the evictor's decision (PDB or throttling)
  opts.cancel = cancel_;
  auto res = client_.post("/api/v1/namespaces/" + r.ns + "/pods/" + r.name + "/eviction", body.dump(), opts);
  if (res) return {res->status, "", "", false, false};
  const ApiError& e = res.error();
  evictor::ApiAnswer a;
  a.status = e.code;
  a.reason = e.reason;
  a.message = e.code == 0 ? e.describe() : e.message;
  a.disruptionBudget =
      e.hasCause("DisruptionBudget") || (e.code == 429 && e.message.find("disruption budget") != std::string::npos);
  a.cancelled = e.code == 0 && e.cancelled;
  return a;
}

void KubeEvictionApi::recordEvent(const evictor::PodEvent& e) {
  // Per thread: Events are recorded from the eviction workers concurrently. The suffix only has to
  // be unique among the pod's Events, as client-go's is.
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char suffix[17];
  std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(rng()));
  const Clock::WallTime now = clock_->wallNow();
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
      {"firstTimestamp", rfc3339(now, false)},
      {"lastTimestamp", rfc3339(now, false)},
      {"eventTime", rfc3339(now, true)},
      {"count", 1}};
  RequestOptions opts;
  opts.cancel = cancel_;
  auto res = client_.post("/api/v1/namespaces/" + e.ns + "/events", ev.dump(), opts);
  if (!res)
    log::warn("cannot record event",
              {{"pod", e.ns + "/" + e.podName}, {"reason", e.reason}, {"error", res.error().describe()}});
}

}  // namespace kdesched::kube
