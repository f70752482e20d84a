#include "pkg/kube/cache_health.h"

#include <algorithm>
#include <cmath>

#include "pkg/base/log.h"
#include "pkg/kube/resources.h"

namespace kdesched::kube {
namespace {

// A stale episode is logged again this often while it lasts.
constexpr std::chrono::minutes kRemindEvery{1};

double secondsOf(Clock::Duration d) { return std::round(std::chrono::duration<double>(d).count() * 10) / 10; }

}  // namespace

std::string StaleResource::describe() const { return resource + " (" + verb + ": " + reason + ")"; }

std::string StaleResource::hint() const {
  if (undecodable)
    return "kdesched cannot read every object of " + resource +
           " and cannot tell what the others would change (a pod's requests, a PDB's budget): fix or delete the "
           "object, or run a kdesched release that reads it; no cycle runs until then";
  if (!denied)
    return "kdesched cannot refresh its cache of " + resource +
           ": check the API server and the network; no cycle runs until it can";
  return "grant " + verb + " on " + resource +
         " to kdesched's identity (the chart's ClusterRole has it); no cycle runs until it is back";
}

CacheHealth::CacheHealth(std::shared_ptr<Clock> clock, Clock::Duration staleAfter)
    : clock_(std::move(clock)), staleAfter_(staleAfter) {}

void CacheHealth::relistRequested(api::Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.insert(kind);
  ++requests_;
}

void CacheHealth::listed(api::Kind kind) {
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(kind);
}

void CacheHealth::onList(api::Kind kind, std::size_t, double) {
  const Clock::TimePoint now = clock_->now();
  std::lock_guard<std::mutex> lock(mu_);
  pending_.erase(kind);
  State& s = states_[kind];
  // A relist replaced the store: a snapshot from before is of another generation. A first list
  // does not: no cycle snapshots before every kind has listed once, and the reflector marks itself
  // synced before it tells its observers, so counting it would refuse the first cycle's evictions
  // (a one-shot run's only cycle) as taken before a relist.
  if (s.listed) ++requests_;
  s.listed = true;
  std::erase_if(s.denied, [](const auto& d) { return d.first == "list"; });
  s.failingSince.reset();
  noteLocked(kind, s, now);
}

void CacheHealth::onWatchOpened(api::Kind kind) {
  const Clock::TimePoint now = clock_->now();
  std::lock_guard<std::mutex> lock(mu_);
  State& s = states_[kind];
  std::erase_if(s.denied, [](const auto& d) { return d.first == "watch"; });
  s.failingSince.reset();
  noteLocked(kind, s, now);
}

void CacheHealth::onError(api::Kind kind, const ReflectorFailure& f) {
  const Clock::TimePoint now = clock_->now();
  std::lock_guard<std::mutex> lock(mu_);
  State& s = states_[kind];
  if (f.denied()) {
    if (s.denied.empty()) s.deniedSince = now;
    auto it = std::find_if(s.denied.begin(), s.denied.end(), [&](const auto& d) { return d.first == f.verb; });
    if (it == s.denied.end())
      s.denied.emplace_back(f.verb, f.message);
    else
      it->second = f.message;
  } else {
    // A silent watch failed from its last word on, not from when the silence was noticed.
    if (!s.failingSince) s.failingSince = now - f.silentFor;
    s.failedVerb = f.verb;
    s.failure = f.message;
  }
  noteLocked(kind, s, now);
}

void CacheHealth::onUndecodable(api::Kind kind, std::size_t count, const std::string& first) {
  const Clock::TimePoint now = clock_->now();
  std::lock_guard<std::mutex> lock(mu_);
  State& s = states_[kind];
  if (s.undecodable == 0 && count > 0) s.undecodableSince = now;
  s.undecodable = count;
  s.firstUndecodable = first;
  noteLocked(kind, s, now);
}

std::optional<StaleResource> CacheHealth::staleLocked(api::Kind kind, const State& s, Clock::TimePoint now) const {
  StaleResource r;
  r.resource = std::string(resourceName(kind));
  if (!s.denied.empty()) {
    r.verb = s.denied.front().first;
    r.reason = s.denied.front().second;
    r.denied = true;
    r.seconds = secondsOf(now - s.deniedSince);
    return r;
  }
  if (s.undecodable > 0) {
    r.verb = "decode";
    r.reason = s.undecodable == 1 ? "an object kdesched cannot decode: " + s.firstUndecodable
                                  : std::to_string(s.undecodable) +
                                        " objects kdesched cannot decode, the first: " + s.firstUndecodable;
    r.undecodable = true;
    r.seconds = secondsOf(now - s.undecodableSince);
    return r;
  }
  if (s.failingSince && now - *s.failingSince >= staleAfter_) {
    r.verb = s.failedVerb;
    r.reason = s.failure;
    r.seconds = secondsOf(now - *s.failingSince);
    return r;
  }
  return std::nullopt;
}

void CacheHealth::noteLocked(api::Kind kind, State& s, Clock::TimePoint now) const {
  const std::optional<StaleResource> r = staleLocked(kind, s, now);
  if (!r) {
    if (s.announced)
      log::info("cache fresh again", {{"resource", resourceName(kind)}, {"stale_seconds", secondsOf(now - s.staleAt)}});
    s.announced = false;
    return;
  }
  const bool first = !s.announced;
  if (!first && now - s.announcedAt < kRemindEvery) return;
  log::warn(first ? "cache stale" : "cache still stale", {{"resource", r->resource},
                                                          {"verb", r->verb},
                                                          {"reason", r->reason},
                                                          {"seconds", r->seconds},
                                                          {"hint", r->hint()}});
  if (first) {
    s.announced = true;
    s.staleAt = now;
  }
  s.announcedAt = now;
}

std::vector<StaleResource> CacheHealth::staleResources() const {
  const Clock::TimePoint now = clock_->now();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StaleResource> out;
  for (auto& [kind, s] : states_) {
    noteLocked(kind, s, now);
    if (auto r = staleLocked(kind, s, now)) out.push_back(std::move(*r));
  }
  return out;
}

std::string CacheHealth::stale() const {
  std::string out;
  for (const StaleResource& r : staleResources()) out += (out.empty() ? "" : "; ") + r.describe();
  return out;
}

std::string CacheHealth::relisting() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (api::Kind k : pending_) {
    if (!out.empty()) out += ",";
    out += std::string(api::toString(k));
  }
  return out;
}

std::uint64_t CacheHealth::relistRequests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

}  // namespace kdesched::kube
