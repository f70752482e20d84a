#include "pkg/evictor/api_sink.h"

#include "pkg/base/log.h"

namespace kdesched::evictor {

using framework::ApiFailure;
using framework::EvictResult;
using framework::Refusal;

namespace {

std::string eventNote(const Decision& d) {
  return "pod eviction from " + d.node + " node by kdesched (" + d.profile + "/" + d.plugin + "): " + d.reason;
}

// A successful eviction's note also says where the pod is expected to land.
std::string evictedNote(const Decision& d) {
  return d.landing.estimated ? eventNote(d) + "; " + d.landing.describe() : eventNote(d);
}

}  // namespace

ApiFailure apiFailureOf(const ApiAnswer& a) {
  if (a.status == 0) return a.cancelled ? ApiFailure::Cancelled : ApiFailure::Unreachable;
  if (a.status == 401) return ApiFailure::Unauthorized;
  if (a.status == 403) return ApiFailure::Forbidden;
  if (a.status == 404) return ApiFailure::NotFound;
  if (a.status == 409) return ApiFailure::Conflict;
  if (a.status == 429) return ApiFailure::TooManyRequests;
  if (a.status >= 500) return ApiFailure::ServerError;
  return ApiFailure::Rejected;
}

namespace {

// The refusal for an answer that was not a success; `by` keeps the words operators grep for.
EvictResult refusalFor(const ApiAnswer& a) {
  const ApiFailure f = apiFailureOf(a);
  switch (f) {
    case ApiFailure::TooManyRequests:
      if (a.disruptionBudget) return EvictResult::apiRefused(Refusal::Pdb, f, "api: PodDisruptionBudget", a.message);
      return EvictResult::apiRefused(Refusal::ApiError, f, "api: throttled",
                                     a.message.empty() ? "429 Too Many Requests" : a.message);
    case ApiFailure::NotFound:
      return EvictResult::apiRefused(Refusal::ApiError, f, "api: not found", "the pod is already gone");
    case ApiFailure::Conflict:
      return EvictResult::apiRefused(Refusal::ApiError, f, "api: conflict",
                                     "the pod was replaced (UID precondition failed): " + a.message);
    case ApiFailure::Unreachable: return EvictResult::apiRefused(Refusal::ApiError, f, "api: unreachable", a.message);
    case ApiFailure::Cancelled: return EvictResult::apiRefused(Refusal::ApiError, f, "api: cancelled", a.message);
    default: return EvictResult::apiRefused(Refusal::ApiError, f, "api: " + std::to_string(a.status), a.message);
  }
}

}  // namespace

EvictResult ApiSink::evict(const Decision& d) {
  const api::Pod& pod = *d.pod;
  if (pod.uid.empty()) {
    // Upstream refuses too: without a UID there is no precondition, and no certainty which pod goes.
    return EvictResult::refused(Refusal::ApiError, "evictor", "pod has no UID");
  }
  EvictionRequest req{pod.ns.str(), pod.name, pod.uid.str(), options_.gracePeriodSeconds,
                      "triggered by " + d.profile + "/" + d.plugin + ": " + d.reason};
  ApiAnswer a = api_.evict(req);
  if (a.status >= 200 && a.status < 300) {
    // Upstream's message and `strategy` key, so log alerts written for upstream keep matching.
    log::info("Evicted pod", {{"pod", pod.key()},
                              {"node", d.node},
                              {"plugin", d.plugin},
                              {"strategy", d.plugin},
                              {"profile", d.profile},
                              {"reason", d.reason},
                              {"expected_node", expectedNode(d.landing)},
                              {"landing", d.landing.describe()},
                              {"result", "success"}});
    api_.recordEvent({req.ns, pod.name, pod.uid.str(), "Normal", d.plugin, "Descheduled", evictedNote(d)});
    return EvictResult::success();
  }
  EvictResult res = refusalFor(a);
  log::warn("eviction failed", {{"pod", pod.key()},
                                {"node", d.node},
                                {"plugin", d.plugin},
                                {"profile", d.profile},
                                {"status", a.status},
                                {"by", res.by},
                                {"detail", res.detail},
                                // When it was sent: an answer can come long after (a paused or
                                // overloaded server), when the sender may no longer lead.
                                {"seconds", a.seconds},
                                {"result", "error"}});
  if (options_.failureEvents)
    api_.recordEvent({req.ns, pod.name, pod.uid.str(), "Warning", "EvictionFailed", "Descheduled",
                      eventNote(d) + " failed: " + res.detail});
  return res;
}

bool ApiSink::repeats(const RefusedDecision& r) {
  if (!options_.clock) return false;
  const Clock::TimePoint now = options_.clock->now();
  std::string what = std::string(framework::toString(r.result.refusal)) + "/" + r.result.by;
  std::lock_guard<std::mutex> lock(mu_);
  constexpr std::size_t kMaxPods = 100000;  // bounded: a cluster's worth of refused pods
  if (logged_.size() >= kMaxPods)
    std::erase_if(logged_, [&](const auto& kv) { return now - kv.second.at >= options_.repeatQuiet; });
  if (logged_.size() >= kMaxPods) logged_.clear();
  const api::Pod& pod = *r.wanted.pod;
  auto [it, fresh] = logged_.try_emplace(pod.uid.empty() ? pod.key() : pod.uid.str(), Logged{what, now});
  if (fresh) return false;
  if (it->second.what == what && now - it->second.at < options_.repeatQuiet) return true;
  it->second = Logged{std::move(what), now};
  return false;
}

void ApiSink::refused(const RefusedDecision& r) {
  // A repeat within the quiet window is a debug line, and says so.
  const bool repeat = repeats(r);
  log::write(repeat ? log::Level::Debug : log::Level::Info, "eviction refused",
             {{"pod", r.wanted.pod->key()},
              {"node", r.wanted.node},
              {"plugin", r.wanted.plugin},
              {"profile", r.wanted.profile},
              {"by", r.result.by},
              {"refusal", framework::toString(r.result.refusal)},
              {"detail", r.result.detail},
              {"repeat", repeat}});
  bool limit = r.result.refusal == Refusal::TotalLimit || r.result.refusal == Refusal::NodeLimit ||
               r.result.refusal == Refusal::NamespaceLimit;
  if (options_.failureEvents && limit)
    api_.recordEvent({r.wanted.pod->ns.str(), r.wanted.pod->name, r.wanted.pod->uid.str(), "Warning", "EvictionFailed",
                      "Descheduled", eventNote(r.wanted) + " failed: " + r.result.detail});
}

}  // namespace kdesched::evictor
