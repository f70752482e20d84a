#include "pkg/trigger/antiflapping.h"

#include <algorithm>
#include <cmath>

#include "pkg/base/log.h"

namespace kdesched::trigger {

using framework::EvictResult;
using framework::Refusal;
using framework::Suppression;

AntiFlapping::AntiFlapping(policy::AntiFlappingConfig config, std::shared_ptr<Clock> clock, GaveUp gaveUp,
                           Suppressed suppressed)
    : config_(config), clock_(std::move(clock)), gaveUp_(std::move(gaveUp)), suppressed_(std::move(suppressed)) {}

double AntiFlapping::nowSeconds() const {
  return std::chrono::duration<double>(clock_->now().time_since_epoch()).count();
}

std::string AntiFlapping::ownerOf(const api::Pod& p) {
  const api::OwnerReference* c = p.controllerRef();
  return c ? c->uid : std::string();
}

// The rule part of a reason, without the pod names that change with every replacement:
// "required podAntiAffinity term {...} is violated by pod default/order-x on node n" → up to " by pod".
std::string AntiFlapping::ruleOf(const std::string& reason) {
  auto cut = reason.find(" is violated by pod ");
  return cut == std::string::npos ? reason : reason.substr(0, cut);
}

EvictResult AntiFlapping::admit(const evictor::Decision& d) {
  double now = nowSeconds();
  std::string owner = ownerOf(*d.pod);
  std::lock_guard<std::mutex> lock(mu_);
  while (!recent_.empty() && recent_.front() <= now - 60) recent_.pop_front();
  auto suppress = [&](Suppression why, std::string detail) {
    const std::string reason(framework::toString(why));
    if (suppressed_) suppressed_(reason);
    EvictResult r = EvictResult::refused(Refusal::AntiFlapping, "anti-flapping: " + reason, std::move(detail));
    r.suppression = why;
    return r;
  };
  if (!owner.empty()) {
    auto it = owners_.find(owner);
    if (it != owners_.end()) {
      const Owner& o = it->second;
      if (now < o.backoffUntil)
        return suppress(Suppression::Backoff,
                        "evictions of this owner keep recreating the same situation; backing off for " +
                            std::to_string(static_cast<long long>(o.backoffUntil - now)) + "s more");
      const bool sameRun = inRun_ && o.lastRun == run_;
      if (config_.ownerCooldownSeconds > 0 && !sameRun && now - o.lastEviction < config_.ownerCooldownSeconds)
        return suppress(Suppression::Cooldown,
                        "another pod of the same owner was evicted " +
                            std::to_string(static_cast<long long>(now - o.lastEviction)) + "s ago (ownerCooldown " +
                            std::to_string(static_cast<long long>(config_.ownerCooldownSeconds)) + "s)");
    }
  }
  if (config_.maxEvictionsPerMinute > 0 && static_cast<double>(recent_.size()) >= config_.maxEvictionsPerMinute) {
    EvictResult r = suppress(
        Suppression::RateLimit,
        "maxEvictionsPerMinute " + std::to_string(static_cast<long long>(config_.maxEvictionsPerMinute)) + " reached");
    r.endsRun = true;  // a run lasts well under the minute it would take to free a slot
    return r;
  }
  return {};
}

void AntiFlapping::runStarted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++run_;
  inRun_ = true;
}

void AntiFlapping::runFinished() {
  const double now = nowSeconds();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [uid, o] : owners_)
    if (o.lastRun == run_) o.lastEviction = now;  // the cooldown runs from the end of the run
  inRun_ = false;
  forgetQuietOwners(now);
}

// The ledger gains an owner with every controller whose pod is evicted (each rollout's ReplicaSet,
// each Job), so a daemon that kept them all would grow with its uptime and walk them all after
// every run. An owner is remembered for as long as anything can still depend on it: its cooldown,
// its backoff, and then the longest backoff again, so that flaps hours apart still escalate.
double AntiFlapping::forgetAfter() const { return std::max(config_.ownerCooldownSeconds, config_.backoffMaxSeconds); }

void AntiFlapping::forgetQuietOwners(double now) {
  const double after = forgetAfter();
  std::erase_if(owners_, [&](const auto& entry) {
    const Owner& o = entry.second;
    return now - std::max(o.lastEviction, o.backoffUntil) > after;
  });
}

std::optional<AntiFlapping::GaveUpNotice> AntiFlapping::flap(Owner& o, const PodRef& pod) {
  ++o.flaps;
  if (o.flaps < config_.backoffAfter) return std::nullopt;
  double backoff = std::min(config_.backoffMaxSeconds, config_.backoffInitialSeconds * std::pow(2.0, o.backoffs));
  ++o.backoffs;
  o.backoffUntil = nowSeconds() + backoff;
  int flaps = o.flaps;
  o.flaps = 0;
  return GaveUpNotice{pod, flaps, backoff};
}

void AntiFlapping::deliver(const std::optional<GaveUpNotice>& n) {
  if (!n) return;
  log::warn("descheduling gave up for a while", {{"pod", n->pod.ns + "/" + n->pod.name},
                                                 {"flaps", n->flaps},
                                                 {"backoff_seconds", static_cast<long long>(std::lround(n->backoff))}});
  if (gaveUp_) gaveUp_(n->pod, n->flaps, n->backoff);
}

void AntiFlapping::evicted(const evictor::Decision& d) {
  double now = nowSeconds();
  std::string owner = ownerOf(*d.pod);
  std::optional<GaveUpNotice> notice;
  {
    std::lock_guard<std::mutex> lock(mu_);
    recent_.push_back(now);
    if (owner.empty()) return;
    Owner& o = owners_[owner];
    std::string rule = ruleOf(d.reason);
    // The same rule broken again on the same node by the same owner, by a pod created since the
    // last eviction (its replacement, as far as we can tell): the last eviction did not help
    // (counted once per eviction: not again when its replacement was already seen landing back).
    // A sibling already running then is not a replacement: evicting the owner's pods off one node
    // one after another (a paced drain) is not flapping. No creation time: counted.
    const double wall = clock_->unixSeconds();
    const bool replacement =
        !d.pod->creationTimestamp || static_cast<double>(*d.pod->creationTimestamp) >= std::floor(o.lastEvictionWall);
    bool repeat = !o.lastRule.empty() && o.lastRule == rule && o.lastNode == d.node && !o.lastCounted && replacement;
    o.lastEviction = now;
    o.lastEvictionWall = wall;
    o.lastRun = inRun_ ? run_ : 0;
    o.lastNode = d.node;
    o.lastRule = rule;
    o.awaitingReplacement = true;
    o.lastCounted = false;
    if (repeat) notice = flap(o, {d.pod->ns.str(), d.pod->name, d.pod->uid.str()});
  }
  deliver(notice);
}

void AntiFlapping::replacementBound(const std::string& ownerUid, const std::string& node, const PodRef& replacement) {
  std::optional<GaveUpNotice> notice;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = owners_.find(ownerUid);
    if (it == owners_.end() || !it->second.awaitingReplacement) return;
    Owner& o = it->second;
    o.awaitingReplacement = false;
    if (node == o.lastNode) {
      o.lastCounted = true;
      notice = flap(o, replacement);
    }
  }
  deliver(notice);
}

int AntiFlapping::flaps(const std::string& ownerUid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owners_.find(ownerUid);
  return it == owners_.end() ? 0 : it->second.flaps;
}

std::size_t AntiFlapping::ledgerSize() const {
  std::lock_guard<std::mutex> lock(mu_);
  return owners_.size();
}

bool AntiFlapping::inBackoff(const std::string& ownerUid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = owners_.find(ownerUid);
  return it != owners_.end() && nowSeconds() < it->second.backoffUntil;
}

}  // namespace kdesched::trigger
