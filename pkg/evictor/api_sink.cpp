#include "pkg/evictor/api_sink.h"

#include <ctime>

#include <fmt/chrono.h>

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

// A 5xx or no answer at all: the request may have been carried out. Cut short by shutdown: not
// sent, or sent as the process ends, when nobody is left to count it.
bool uncertain(const ApiAnswer& a) { return (a.status == 0 && !a.cancelled) || a.status >= 500; }

}  // namespace

EvictResult ApiSink::move(const Decision& d) {
  const api::Pod& pod = *d.pod;
  const MovePlan& m = *d.move;
  if (options_.leader && !options_.leader->isLeader())
    return EvictResult::refused(Refusal::NotLeader, "leader election",
                                "this replica is not the leader any more (checked right before sending)");
  const std::time_t now = options_.clock ? std::chrono::system_clock::to_time_t(options_.clock->wallNow()) : 0;
  RestartRequest req{m.ns, m.deployment, m.uid, m.resourceVersion,
                     fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(now))};
  const ApiAnswer a = api_.restartDeployment(req);
  const std::string deployment = m.ns + "/" + m.deployment;
  if (a.status < 200 || a.status >= 300) {
    EvictResult res = refusalFor(a);
    res.by = "api: Deployment " + deployment;
    if (res.refusal == Refusal::Pdb) res.refusal = Refusal::ApiError;
    if (apiFailureOf(a) == ApiFailure::Conflict)
      res.detail = "the Deployment changed since it was read (UID or resourceVersion precondition): " + a.message;
    log::warn("move failed", {{"pod", pod.key()},
                              {"node", d.node},
                              {"plugin", d.plugin},
                              {"profile", d.profile},
                              {"deployment", deployment},
                              {"status", a.status},
                              {"detail", res.detail},
                              {"step", "restart"},
                              {"result", "error"}});
    return res;
  }
  log::info("Moving pod", {{"pod", pod.key()},
                           {"node", d.node},
                           {"plugin", d.plugin},
                           {"profile", d.profile},
                           {"reason", d.reason},
                           {"deployment", deployment},
                           {"rollout", m.rollout},
                           {"restarted_at", req.restartedAt},
                           {"expected_node", expectedNode(d.landing)},
                           {"landing", d.landing.describe()},
                           {"step", "restart"},
                           {"result", "success"}});
  return EvictResult::success();
}

EvictResult ApiSink::evict(const Decision& d) {
  if (d.move) return move(d);
  const api::Pod& pod = *d.pod;
  if (pod.uid.empty()) {
    // Upstream refuses too: without a UID there is no precondition, and no certainty which pod goes.
    return EvictResult::refused(Refusal::ApiError, "evictor", "pod has no UID");
  }
  EvictionRequest req{pod.ns.str(), pod.name, pod.uid.str(), options_.gracePeriodSeconds,
                      "triggered by " + d.profile + "/" + d.plugin + ": " + d.reason};
  if (options_.leader && !options_.leader->isLeader())
    return EvictResult::refused(Refusal::NotLeader, "leader election",
                                "this replica is not the leader any more (checked right before sending)");
  ApiAnswer a = api_.evict(req);
  if (a.status >= 200 && a.status < 300) return evicted(d, req, a, "");
  if (!uncertain(a)) return failed(d, req, a, "");
  const PodCheck check = confirm(d);
  switch (check.presence) {
    case PodPresence::Gone: return evicted(d, req, a, check.detail);
    case PodPresence::Present: return failed(d, req, a, "not evicted: " + check.detail);
    case PodPresence::Unknown: break;
  }
  log::warn("eviction outcome unknown; counted as evicted", {{"pod", pod.key()},
                                                             {"node", d.node},
                                                             {"plugin", d.plugin},
                                                             {"profile", d.profile},
                                                             {"status", a.status},
                                                             {"detail", a.message},
                                                             {"check", check.detail},
                                                             {"seconds", a.seconds},
                                                             {"result", "unknown"}});
  return EvictResult::success();
}

PodCheck ApiSink::confirm(const Decision& d) {
  const api::Pod& pod = *d.pod;
  PodCheck last;
  for (std::chrono::milliseconds wait : options_.confirmWaits) {
    if (options_.clock) options_.clock->sleepFor(wait, nullptr);
    last = api_.checkPod(pod.ns.str(), pod.name, pod.uid.str());
    if (last.presence == PodPresence::Gone) return last;
  }
  return last;
}

EvictResult ApiSink::evicted(const Decision& d, const EvictionRequest& req, const ApiAnswer& a,
                             const std::string& confirmed) {
  const api::Pod& pod = *d.pod;
  // Upstream's message and `strategy` key, so log alerts written for upstream keep matching.
  if (confirmed.empty())
    log::info("Evicted pod", {{"pod", pod.key()},
                              {"node", d.node},
                              {"plugin", d.plugin},
                              {"strategy", d.plugin},
                              {"profile", d.profile},
                              {"reason", d.reason},
                              {"expected_node", expectedNode(d.landing)},
                              {"landing", d.landing.describe()},
                              {"result", "success"}});
  else  // the answer said otherwise; the pod's state says it went
    log::info("Evicted pod", {{"pod", pod.key()},
                              {"node", d.node},
                              {"plugin", d.plugin},
                              {"strategy", d.plugin},
                              {"profile", d.profile},
                              {"reason", d.reason},
                              {"expected_node", expectedNode(d.landing)},
                              {"landing", d.landing.describe()},
                              {"result", "success"},
                              {"answer", a.status},
                              {"confirmed", confirmed}});
  api_.recordEvent({req.ns, pod.name, pod.uid.str(), "Normal", d.plugin, "Descheduled", evictedNote(d)});
  return EvictResult::success();
}

EvictResult ApiSink::failed(const Decision& d, const EvictionRequest& req, const ApiAnswer& a,
                            const std::string& outcome) {
  const api::Pod& pod = *d.pod;
  EvictResult res = refusalFor(a);
  if (!outcome.empty()) res.detail += "; " + outcome;
  const std::string_view event = res.refusal == Refusal::Pdb ? blockedEvent(d, res) : "none";
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
                                {"event", event},
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

std::string_view ApiSink::blockedEvent(const Decision& d, const EvictResult& r) {
  if (!options_.blocked) return "off";
  PodEvent e;
  const std::string_view outcome = options_.blocked->take(d, r, e);
  if (outcome == "posted") api_.recordEvent(e);
  return outcome;
}

void ApiSink::refused(const RefusedDecision& r) {
  // A repeat within the quiet window is a debug line, and says so.
  const bool repeat = repeats(r);
  const std::string_view event = blockedEvent(r.wanted, r.result);
  log::write(repeat ? log::Level::Debug : log::Level::Info, "eviction refused",
             {{"pod", r.wanted.pod->key()},
              {"node", r.wanted.node},
              {"plugin", r.wanted.plugin},
              {"profile", r.wanted.profile},
              {"by", r.result.by},
              {"refusal", framework::toString(r.result.refusal)},
              {"detail", r.result.detail},
              {"repeat", repeat},
              {"event", event}});
  bool limit = r.result.refusal == Refusal::TotalLimit || r.result.refusal == Refusal::NodeLimit ||
               r.result.refusal == Refusal::NamespaceLimit;
  if (options_.failureEvents && limit)
    api_.recordEvent({r.wanted.pod->ns.str(), r.wanted.pod->name, r.wanted.pod->uid.str(), "Warning", "EvictionFailed",
                      "Descheduled", eventNote(r.wanted) + " failed: " + r.result.detail});
}

}  // namespace kdesched::evictor
