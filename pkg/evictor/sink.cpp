#include "pkg/evictor/sink.h"

#include <spdlog/spdlog.h>

namespace kdesched::evictor {

framework::EvictResult PlanSink::evict(const Decision& d) {
  evictions_.push_back(d);
  return framework::EvictResult::success();
}

void PlanSink::refused(const RefusedDecision& r) { refusals_.push_back(r); }

framework::EvictResult DryRunSink::evict(const Decision& d) {
  spdlog::info("msg=\"evicted pod (dry run)\" pod={} node={} plugin={} profile={} reason=\"{}\" result=dry-run",
               d.pod->key(), d.node, d.plugin, d.profile, d.reason);
  return framework::EvictResult::success();
}

void DryRunSink::refused(const RefusedDecision& r) {
  spdlog::info("msg=\"eviction refused (dry run)\" pod={} node={} plugin={} profile={} by={} refusal={} detail=\"{}\"",
               r.wanted.pod->key(), r.wanted.node, r.wanted.plugin, r.wanted.profile, r.result.by,
               framework::toString(r.result.refusal), r.result.detail);
}

framework::EvictResult TeeSink::evict(const Decision& d) {
  framework::EvictResult res = primary_.evict(d);
  for (Sink* s : observers_) {
    if (res.evicted)
      s->evict(d);
    else
      s->refused({d, res});
  }
  return res;
}

void TeeSink::refused(const RefusedDecision& r) {
  primary_.refused(r);
  for (Sink* s : observers_) s->refused(r);
}

}  // namespace kdesched::evictor
