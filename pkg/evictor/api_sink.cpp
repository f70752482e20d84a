#include "pkg/evictor/api_sink.h"

#include <spdlog/spdlog.h>

namespace kdesched::evictor {

using framework::EvictResult;
using framework::Refusal;

namespace {

std::string eventNote(const Decision& d) {
  return "pod eviction from " + d.node + " node by kdesched (" + d.profile + "/" + d.plugin + "): " + d.reason;
}

}  // namespace

EvictResult ApiSink::evict(const Decision& d) {
  const api::Pod& pod = *d.pod;
  if (pod.uid.empty()) {
    // Upstream refuses too: without a UID there is no precondition, and no certainty which pod goes.
    return EvictResult::refused(Refusal::ApiError, "evictor", "pod has no UID");
  }
  EvictionRequest req{pod.ns.str(), pod.name, pod.uid, options_.gracePeriodSeconds,
                      "triggered by " + d.profile + "/" + d.plugin + ": " + d.reason};
  ApiAnswer a = api_.evict(req);
  EvictResult res;
  if (a.status >= 200 && a.status < 300) {
    spdlog::info("msg=\"evicted pod\" pod={} node={} plugin={} profile={} reason=\"{}\" result=success", pod.key(),
                 d.node, d.plugin, d.profile, d.reason);
    api_.recordEvent({req.ns, pod.name, pod.uid, "Normal", d.plugin, "Descheduled", eventNote(d)});
    return EvictResult::success();
  }
  if (a.status == 429 && a.disruptionBudget) {
    res = EvictResult::refused(Refusal::Pdb, "api: PodDisruptionBudget", a.message);
  } else if (a.status == 429) {
    res = EvictResult::refused(Refusal::ApiError, "api: throttled",
                               a.message.empty() ? "429 Too Many Requests" : a.message);
  } else if (a.status == 404) {
    res = EvictResult::refused(Refusal::ApiError, "api: not found", "the pod is already gone");
  } else if (a.status == 409) {
    res = EvictResult::refused(Refusal::ApiError, "api: conflict",
                               "the pod was replaced (UID precondition failed): " + a.message);
  } else if (a.status == 0) {
    res = EvictResult::refused(Refusal::ApiError, "api: unreachable", a.message);
  } else {
    res = EvictResult::refused(Refusal::ApiError, "api: " + std::to_string(a.status), a.message);
  }
  spdlog::warn(
      "msg=\"eviction failed\" pod={} node={} plugin={} profile={} status={} by=\"{}\" detail=\"{}\" result=error",
      pod.key(), d.node, d.plugin, d.profile, a.status, res.by, res.detail);
  if (options_.failureEvents)
    api_.recordEvent({req.ns, pod.name, pod.uid, "Warning", "EvictionFailed", "Descheduled",
                      eventNote(d) + " failed: " + res.detail});
  return res;
}

void ApiSink::refused(const RefusedDecision& r) {
  spdlog::info("msg=\"eviction refused\" pod={} node={} plugin={} profile={} by=\"{}\" refusal={} detail=\"{}\"",
               r.wanted.pod->key(), r.wanted.node, r.wanted.plugin, r.wanted.profile, r.result.by,
               framework::toString(r.result.refusal), r.result.detail);
  bool limit = r.result.refusal == Refusal::TotalLimit || r.result.refusal == Refusal::NodeLimit ||
               r.result.refusal == Refusal::NamespaceLimit;
  if (options_.failureEvents && limit)
    api_.recordEvent({r.wanted.pod->ns.str(), r.wanted.pod->name, r.wanted.pod->uid, "Warning", "EvictionFailed",
                      "Descheduled", eventNote(r.wanted) + " failed: " + r.result.detail});
}

}  // namespace kdesched::evictor
