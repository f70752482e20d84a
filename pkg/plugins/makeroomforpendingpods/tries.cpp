#include "pkg/plugins/makeroomforpendingpods/tries.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "pkg/base/duration_text.h"
#include "pkg/base/log.h"

namespace kdesched::plugins::makeroomforpendingpods {

std::string TryOutcome::text() const {
  const std::string pod = ns + "/" + name;
  const std::string after =
      durationText(seconds) + " after room was made on node " + node + " (try " + std::to_string(tries) + ")";
  if (result == "scheduled") return "pending pod " + pod + " scheduled on node " + boundTo + " " + after;
  if (result == "scheduled_elsewhere")
    return "pending pod " + pod + " scheduled on node " + boundTo + ", not the node room was made on, " + after;
  if (result == "gone") return "pending pod " + pod + " gone before it was scheduled, " + after;
  return "pending pod " + pod + " still not scheduled " + after + "; it may be tried again";
}

double Tries::backoffSeconds(int count) const {
  double s = backoff_.initialSeconds;
  for (int i = 1; i < count && s < backoff_.maxSeconds; ++i) s *= 2;
  return std::min(s, backoff_.maxSeconds);
}

void Tries::end(Try& t, const std::string& uid, std::string result, std::string boundTo, api::Timestamp now) {
  t.open = false;
  TryOutcome o{.ns = t.ns,
               .name = t.name,
               .uid = uid,
               .result = std::move(result),
               .node = t.node,
               .boundTo = std::move(boundTo),
               .seconds = static_cast<double>(std::max<api::Timestamp>(0, now - t.at)),
               .tries = t.count};
  const bool placed = o.result == "scheduled" || o.result == "scheduled_elsewhere";
  const std::string pod = o.ns + "/" + o.name;
  log::write(placed ? log::Level::Info : log::Level::Warn, placed ? "pending pod helped" : "pending pod not helped",
             {{"plugin", "MakeRoomForPendingPods"},
              {"pod", pod},
              {"result", o.result},
              {"node", o.node},
              {"bound_to", o.boundTo},
              {"seconds", o.seconds},
              {"tries", o.tries}});
  if (sink_) sink_({.ns = o.ns, .name = o.name, .uid = o.uid, .result = o.result, .note = o.text()});
}

void Tries::observe(const cluster::Snapshot& snapshot, api::Timestamp now) {
  std::lock_guard<std::mutex> lock(mu_);
  if (tries_.empty()) return;
  std::unordered_map<std::string, const api::Pod*> seen;
  for (const api::Pod* p : snapshot.pods()) {
    if (p->uid.empty()) continue;
    std::string uid = p->uid.str();
    if (tries_.contains(uid)) seen.emplace(std::move(uid), p);
  }
  for (auto it = tries_.begin(); it != tries_.end();) {
    Try& t = it->second;
    const auto found = seen.find(it->first);
    const api::Pod* pod = found == seen.end() ? nullptr : found->second;
    if (pod && pod->nodeName.empty() && !pod->isTerminating() && pod->phase == api::PodPhase::Pending) {
      // Still pending: the try ends when its backoff runs out; the entry stays for the count.
      if (t.open && now >= t.at + static_cast<api::Timestamp>(backoffSeconds(t.count)))
        end(t, it->first, "still_pending", "", now);
      ++it;
      continue;
    }
    if (t.open) {
      if (pod && !pod->nodeName.empty())
        end(t, it->first, pod->nodeName.str() == t.node ? "scheduled" : "scheduled_elsewhere", pod->nodeName.str(),
            now);
      else
        end(t, it->first, "gone", "", now);
    }
    it = tries_.erase(it);
  }
}

std::optional<std::string> Tries::holds(const api::Pod& pod, api::Timestamp now) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = tries_.find(pod.uid.str());
  if (it == tries_.end() || !it->second.open) return std::nullopt;
  const Try& t = it->second;
  const double backoff = backoffSeconds(t.count);
  if (static_cast<double>(now - t.at) >= backoff) return std::nullopt;
  return "not helped now: room was made for it on node " + t.node + " " +
         durationText(static_cast<double>(now - t.at)) + " ago (try " + std::to_string(t.count) +
         ") and the scheduler has not placed it yet; tried again " + durationText(backoff) +
         " after that try at the earliest (the anti-flapping backoff)";
}

std::optional<api::Timestamp> Tries::heldUntil(const api::Pod& pod) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = tries_.find(pod.uid.str());
  if (it == tries_.end() || !it->second.open) return std::nullopt;
  return it->second.at + static_cast<api::Timestamp>(std::ceil(backoffSeconds(it->second.count)));
}

void Tries::tried(const api::Pod& pod, const std::string& node, api::Timestamp now) {
  std::lock_guard<std::mutex> lock(mu_);
  Try& t = tries_[pod.uid.str()];
  t.ns = pod.ns.str();
  t.name = pod.name;
  t.node = node;
  t.at = now;
  t.open = true;
  ++t.count;
}

std::size_t Tries::open() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<std::size_t>(
      std::count_if(tries_.begin(), tries_.end(), [](const auto& e) { return e.second.open; }));
}

}  // namespace kdesched::plugins::makeroomforpendingpods
