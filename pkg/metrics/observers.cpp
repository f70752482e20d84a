#include "pkg/metrics/observers.h"

namespace kdesched::metrics {

using framework::Refusal;

framework::EvictResult EvictionMetrics::evict(const evictor::Decision& d) {
  // A move evicts nothing: kdesched_moves_total counts it when it ends (pkg/moves/tracker.h).
  if (d.move) return framework::EvictResult::success();
  m_.podEvicted("success", d.plugin, d.profile, d.pod->ns.str(), d.node);
  m_.ownerEvicted(d.pod->ns.str(), workloadOf(*d.pod), d.plugin, clock_.now());
  return framework::EvictResult::success();
}

void EvictionMetrics::refused(const evictor::RefusedDecision& r) {
  const evictor::Decision& d = r.wanted;
  m_.evictionRefused(std::string(framework::toString(r.result.refusal)), d.plugin, d.profile);
  // Upstream counts API failures (a PDB's 429 among them) and limit hits under
  // descheduler_pods_evicted_total too.
  if ((r.result.refusal == Refusal::ApiError || r.result.refusal == Refusal::Pdb) && !d.move)
    m_.podEvicted("error", d.plugin, d.profile, d.pod->ns.str(), d.node);
  else if (const char* limit = limitResult(r.result.refusal))
    m_.podEvicted(limit, d.plugin, d.profile, d.pod->ns.str(), d.node);
}

const char* EvictionMetrics::limitResult(Refusal r) {
  switch (r) {
    case Refusal::TotalLimit: return "maximum number of evicted pods per a descheduling cycle reached";
    case Refusal::NodeLimit: return "maximum number of evicted pods per node reached";
    case Refusal::NamespaceLimit: return "maximum number of evicted pods per namespace reached";
    default: return nullptr;
  }
}

void PluginTimer::pluginFinished(const std::string& profile, const std::string& plugin, double seconds, const Status&) {
  m_.strategyDuration(plugin, profile, seconds);
}

void WatchMetrics::onWatchRestart(api::Kind kind, const std::string& reason) {
  m_.watchRestarted(std::string(api::toString(kind)), reason);
}

void WatchMetrics::onRelist(api::Kind kind, const std::string&) { m_.relisted(std::string(api::toString(kind))); }

}  // namespace kdesched::metrics
