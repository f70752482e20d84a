#include "pkg/evictor/sink.h"

#include "pkg/base/log.h"

namespace kdesched::evictor {

std::string expectedNode(const framework::Landing& landing) {
  return landing.fitsNowhere() ? "none" : landing.expected();
}

framework::EvictResult PlanSink::evict(const Decision& d) {
  evictions_.push_back(d);
  return framework::EvictResult::success();
}

void PlanSink::refused(const RefusedDecision& r) { refusals_.push_back(r); }

framework::EvictResult DryRunSink::evict(const Decision& d) {
  if (d.move) {
    log::info("Moved pod in dry run mode", {{"pod", d.pod->key()},
                                            {"node", d.node},
                                            {"plugin", d.plugin},
                                            {"profile", d.profile},
                                            {"reason", d.reason},
                                            {"deployment", d.move->ns + "/" + d.move->deployment},
                                            {"rollout", d.move->rollout},
                                            {"expected_node", expectedNode(d.landing)},
                                            {"landing", d.landing.describe()},
                                            {"result", "dry-run"}});
    return framework::EvictResult::success();
  }
  log::info("Evicted pod in dry run mode", {{"pod", d.pod->key()},
                                            {"node", d.node},
                                            {"plugin", d.plugin},
                                            {"strategy", d.plugin},
                                            {"profile", d.profile},
                                            {"reason", d.reason},
                                            {"expected_node", expectedNode(d.landing)},
                                            {"landing", d.landing.describe()},
                                            {"result", "dry-run"}});
  return framework::EvictResult::success();
}

void DryRunSink::refused(const RefusedDecision& r) {
  log::info("eviction refused (dry run)", {{"pod", r.wanted.pod->key()},
                                           {"node", r.wanted.node},
                                           {"plugin", r.wanted.plugin},
                                           {"profile", r.wanted.profile},
                                           {"by", r.result.by},
                                           {"refusal", framework::toString(r.result.refusal)},
                                           {"detail", r.result.detail}});
}

}  // namespace kdesched::evictor
