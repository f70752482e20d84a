#include "pkg/evictor/blocked_events.h"

#include <algorithm>

namespace kdesched::evictor {

using framework::Refusal;

BlockedEvents::BlockedEvents(BlockedEventsOptions options, Clock& clock)
    : options_(options), clock_(clock), tokens_(options.perMinute), refilled_(clock.now()) {}

bool BlockedEvents::worthAnEvent(Refusal r) {
  switch (r) {
    case Refusal::Filter:
    case Refusal::PreEvictionFilter:
    case Refusal::TotalLimit:
    case Refusal::NodeLimit:
    case Refusal::NamespaceLimit:
    case Refusal::Pdb:
    case Refusal::AntiFlapping:
    case Refusal::Budget: return true;
    case Refusal::None:
    case Refusal::Shutdown:
    case Refusal::StaleCache:
    case Refusal::NotLeader:
    case Refusal::ApiError: return false;
  }
  return false;
}

bool BlockedEvents::spend(Clock::TimePoint now) {
  if (options_.perMinute <= 0) return true;
  const double elapsed = std::chrono::duration<double>(now - refilled_).count();
  refilled_ = now;
  tokens_ = std::min(options_.perMinute, tokens_ + elapsed * options_.perMinute / 60.0);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

std::string_view BlockedEvents::take(const Decision& d, const framework::EvictResult& r, PodEvent& out) {
  if (!options_.enabled) return "off";
  if (!worthAnEvent(r.refusal) || !d.pod) return "none";
  const api::Pod& pod = *d.pod;
  std::string key =
      (pod.uid.empty() ? pod.key() : pod.uid.str()) + '\n' + std::string(framework::toString(r.refusal)) + '\n' + r.by;
  const Clock::TimePoint now = clock_.now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = posted_.find(key);
    if (it != posted_.end() && now - it->second < options_.period) return "repeat";
    if (!spend(now)) return "budget";
    if (it != posted_.end()) {
      it->second = now;
    } else {
      if (posted_.size() >= kMaxRemembered)
        std::erase_if(posted_, [&](const auto& kv) { return now - kv.second >= options_.period; });
      if (posted_.size() >= kMaxRemembered) posted_.clear();
      posted_.emplace(std::move(key), now);
    }
  }
  out = PodEvent{pod.ns.str(),         pod.name,       pod.uid.str(),     "Normal",
                 std::string(kReason), "Descheduling", blockedNote(d, r), true};
  return "posted";
}

std::string blockedNote(const Decision& d, const framework::EvictResult& r) {
  std::string note = "kdesched (" + d.profile + "/" + d.plugin + ") would evict this pod";
  if (!d.node.empty()) note += " from " + d.node;
  note += ": " + d.reason + "; blocked by " + r.by + " (" + std::string(framework::toString(r.refusal)) + ")";
  if (!r.detail.empty()) note += ": " + r.detail;
  return note;
}

}  // namespace kdesched::evictor
