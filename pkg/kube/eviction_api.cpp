#include "pkg/kube/eviction_api.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "pkg/base/log.h"
#include "pkg/base/utf8.h"
#include "pkg/kube/wire.h"

namespace kdesched::kube {

namespace {

evictor::ApiAnswer answerOf(const ApiResult<HttpResponse>& res, double seconds) {
  evictor::ApiAnswer a;
  a.seconds = seconds;
  if (res) {
    a.status = res->status;
    return a;
  }
  const ApiError& e = res.error();
  a.status = e.code;
  a.reason = e.reason;
  a.message = e.code == 0 ? e.describe() : e.message;
  a.cancelled = e.code == 0 && e.cancelled;
  return a;
}

}  // namespace

evictor::ApiAnswer KubeEvictionApi::getApps(const std::string& resource, const std::string& ns, const std::string& name,
                                            std::string& body) {
  RequestOptions opts;
  opts.cancel = cancel_;
  const Clock::TimePoint sent = clock_->now();
  auto res = client_.get("/apis/apps/v1/namespaces/" + ns + "/" + resource + "/" + name, opts);
  evictor::ApiAnswer a = answerOf(res, std::chrono::duration<double>(clock_->now() - sent).count());
  if (res) body = std::move(res->body);
  return a;
}

evictor::ApiAnswer KubeEvictionApi::restartDeployment(const evictor::RestartRequest& r) {
  nlohmann::json patch = {
      {"metadata", {{"uid", r.uid}, {"resourceVersion", r.resourceVersion}}},
      {"spec",
       {{"template", {{"metadata", {{"annotations", {{"kubectl.kubernetes.io/restartedAt", r.restartedAt}}}}}}}}}};
  RequestOptions opts;
  opts.cancel = cancel_;
  const Clock::TimePoint sent = clock_->now();
  auto res = client_.patch("/apis/apps/v1/namespaces/" + r.ns + "/deployments/" + r.name,
                           patch.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), opts);
  return answerOf(res, std::chrono::duration<double>(clock_->now() - sent).count());
}

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
  const Clock::TimePoint sent = clock_->now();
  auto res = client_.post("/api/v1/namespaces/" + r.ns + "/pods/" + r.name + "/eviction",
                          body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), opts);
  evictor::ApiAnswer a = answerOf(res, std::chrono::duration<double>(clock_->now() - sent).count());
  if (!res) {
    const ApiError& e = res.error();
    a.disruptionBudget =
        e.hasCause("DisruptionBudget") || (e.code == 429 && e.message.find("disruption budget") != std::string::npos);
  }
  return a;
}

evictor::PodCheck KubeEvictionApi::checkPod(const std::string& ns, const std::string& name, const std::string& uid) {
  using evictor::PodPresence;
  RequestOptions opts;
  opts.cancel = cancel_;
  auto res = client_.get("/api/v1/namespaces/" + ns + "/pods/" + name, opts);
  if (!res) {
    if (res.error().code == 404) return {PodPresence::Gone, "404: not found"};
    return {PodPresence::Unknown, res.error().describe()};
  }
  nlohmann::json pod = nlohmann::json::parse(res->body, nullptr, false);
  if (pod.is_discarded() || !pod.is_object()) return {PodPresence::Unknown, "the pod's GET answered no JSON object"};
  const nlohmann::json meta = pod.value("metadata", nlohmann::json::object());
  const std::string got = meta.is_object() ? meta.value("uid", std::string()) : std::string();
  if (got.empty()) return {PodPresence::Unknown, "the pod's GET answered no metadata.uid"};
  if (got != uid) return {PodPresence::Gone, "replaced by uid " + got};
  if (meta.contains("deletionTimestamp") && meta["deletionTimestamp"].is_string())
    return {PodPresence::Gone, "deletionTimestamp " + meta["deletionTimestamp"].get<std::string>()};
  return {PodPresence::Present, "the same uid, not being deleted"};
}

std::int64_t KubeEvictionApi::eventStamp(Clock::WallTime now) {
  const std::int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::int64_t last = lastStamp_.load();
  std::int64_t next = 0;
  do {
    next = std::max(ns, last + 1);
  } while (!lastStamp_.compare_exchange_weak(last, next));
  return next;
}

std::string eventNote(const std::string& note) {
  if (note.size() <= kEventNoteLimit) return note;
  std::size_t end = 0;
  while (end < note.size()) {
    const std::size_t n = std::max<std::size_t>(utf8::sequenceLength(note, end), 1);
    if (end + n > kEventNoteLimit) break;
    end += n;
  }
  return note.substr(0, end);
}

void KubeEvictionApi::recordEvent(const evictor::PodEvent& e) {
  const Clock::WallTime now = clock_->wallNow();
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, "%llx", static_cast<unsigned long long>(eventStamp(now)));
  nlohmann::json ev = {{"apiVersion", "events.k8s.io/v1"},
                       {"kind", "Event"},
                       {"metadata", {{"name", e.podName + "." + suffix}, {"namespace", e.ns}}},
                       {"regarding",
                        {{"apiVersion", e.regardingApiVersion},
                         {"kind", e.regardingKind},
                         {"name", e.podName},
                         {"namespace", e.ns},
                         {"uid", e.podUid}}},
                       {"reason", e.reason},
                       {"note", utf8::sanitize(eventNote(e.note))},
                       {"type", e.type},
                       {"action", e.action},
                       {"reportingController", kEventController},
                       {"reportingInstance", kEventInstance},
                       {"eventTime", rfc3339(now, true)}};
  RequestOptions opts;
  opts.cancel = cancel_;
  opts.limiter = &eventBudget_;
  auto res = client_.post("/apis/events.k8s.io/v1/namespaces/" + e.ns + "/events",
                          ev.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), opts);
  if (!res)
    log::warn("cannot record event",
              {{"pod", e.ns + "/" + e.podName}, {"reason", e.reason}, {"error", res.error().describe()}});
}

}  // namespace kdesched::kube
