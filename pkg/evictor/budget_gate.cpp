#include "pkg/evictor/budget_gate.h"

#include <cmath>

#include "pkg/base/duration_text.h"

namespace kdesched::evictor {

using framework::EvictResult;
using framework::Refusal;

namespace {

std::string ownerText(const std::string& ns, const api::Workload& w) { return w.kind + " " + ns + "/" + w.name; }

}  // namespace

BudgetGate::BudgetGate(std::vector<policy::Budget> budgets, std::shared_ptr<Clock> clock, Remaining remaining)
    : clock_(std::move(clock)), remaining_(std::move(remaining)) {
  for (policy::Budget& b : budgets) {
    State s;
    s.budget = std::move(b);
    states_.push_back(std::move(s));
  }
}

void BudgetGate::cycleBegan(const cluster::Snapshot& snapshot) {
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::WallTime now = clock_->wallNow();
  for (State& s : states_) {
    s.runUsed = 0;
    // A new tick can only come at a new minute: within one, the window found holds until it ends
    // (the look-back walks one duration's minutes, up to 31 days of them).
    const auto minute = std::chrono::floor<std::chrono::minutes>(now);
    if (s.evaluatedAt != minute || (s.window && now >= s.window->end)) {
      s.window = policy::activeWindow(s.budget, now);
      s.evaluatedAt = minute;
    }
    s.active = !s.budget.schedule || s.window.has_value();
    if (!s.window || s.windowStart != s.window->start) {
      s.windowStart = s.window ? std::optional(s.window->start) : std::nullopt;
      s.windowUsed = 0;
    }
    if (s.active && s.budget.percent) {
      s.podsInScope = 0;
      for (const api::Pod* p : snapshot.pods())
        if (s.budget.scope.selectsPod(p->ns.str(), p->labels)) ++s.podsInScope;
    }
    s.allowance = s.active && s.budget.capsEvictions ? s.budget.allowance(s.podsInScope) : 0;
    s.owners.clear();
    if (s.active && s.budget.maxUnavailablePerOwner) {
      // As the Deployment controller sees them: a pod not Ready, or terminating, is unavailable;
      // the allowance is a share of the pods that are not on their way out.
      for (const api::Pod* p : snapshot.pods()) {
        if (p->isTerminal() || !s.budget.scope.selectsPod(p->ns.str(), p->labels)) continue;
        const std::optional<OwnerKey> key = ownerOf(*p);
        if (!key) continue;
        OwnerCount& c = s.owners[*key];
        if (!p->isTerminating()) ++c.pods;
        if (!p->ready || p->isTerminating()) ++c.unavailable;
      }
    }
    s.youngest.clear();
    if (s.budget.minIntervalPerOwnerSeconds) {
      const auto interval = std::chrono::duration_cast<Clock::Duration>(seconds(*s.budget.minIntervalPerOwnerSeconds));
      const Clock::TimePoint mono = clock_->now();
      std::erase_if(s.lastEviction, [&](const auto& e) { return mono - e.second >= interval; });
      // The owner's youngest pod: a replacement created after an eviction this process did not make
      // (before a restart, by a CronJob's previous run, by an earlier leader).
      const auto since =
          static_cast<api::Timestamp>(std::floor(clock_->unixSeconds() - *s.budget.minIntervalPerOwnerSeconds));
      for (const api::Pod* p : snapshot.pods()) {
        if (p->isTerminal() || !p->creationTimestamp || *p->creationTimestamp < since) continue;
        if (!s.budget.scope.selectsPod(p->ns.str(), p->labels)) continue;
        if (const std::optional<OwnerKey> key = ownerOf(*p)) {
          api::Timestamp& y = s.youngest[*key];
          y = std::max(y, *p->creationTimestamp);
        }
      }
    }
    report(s);
  }
}

std::optional<BudgetGate::OwnerKey> BudgetGate::ownerOf(const api::Pod& pod) {
  api::Workload w = api::workloadOf(pod);
  if (w.kind.empty()) return std::nullopt;
  return OwnerKey{pod.ns.str(), std::move(w)};
}

bool BudgetGate::selects(const State& s, const Decision& d) const {
  return s.budget.scope.selectsPlugin(d.plugin) && s.budget.scope.selectsPod(d.pod->ns.str(), d.pod->labels);
}

std::optional<EvictResult> BudgetGate::pacingRefusal(const State& s, const Decision& d) {
  if (!s.budget.paces()) return std::nullopt;
  const std::optional<OwnerKey> key = ownerOf(*d.pod);
  if (!key) return std::nullopt;  // no controller: nothing to pace
  const std::string by = "budget \"" + s.budget.name + "\"";
  if (s.budget.maxUnavailablePerOwner) {
    const auto it = s.owners.find(*key);
    const OwnerCount c = it == s.owners.end() ? OwnerCount{} : it->second;
    const std::uint32_t allowed = s.budget.unavailableAllowance(c.pods);
    if (c.unavailable >= allowed) {
      std::string detail = "owner " + ownerText(key->ns, key->workload) + " has " + std::to_string(c.unavailable) +
                           " of " + std::to_string(allowed) + " allowed pods unavailable";
      if (s.budget.unavailablePercent)
        detail += " (maxUnavailablePerOwner " + std::to_string(*s.budget.maxUnavailablePerOwner) + "% of " +
                  std::to_string(c.pods) + " pods, rounded down, at least 1)";
      // When a replacement turns Ready is not known in advance: the daemon looks again shortly
      // (a scoped run of the refused pods, not the interval's whole cycle).
      retries_.push_back({api::PodName::of(*d.pod), d.plugin, kUnavailableRecheckSeconds});
      return EvictResult::refused(Refusal::Budget, by, std::move(detail));
    }
  }
  if (s.budget.minIntervalPerOwnerSeconds) return intervalRefusal(s, d, *key);
  return std::nullopt;
}

// minIntervalPerOwner: from this process's last eviction of the owner or, when later by more than
// the API's one-second timestamp precision, the creation of the owner's youngest pod.
std::optional<EvictResult> BudgetGate::intervalRefusal(const State& s, const Decision& d, const OwnerKey& key) {
  const double interval = *s.budget.minIntervalPerOwnerSeconds;
  std::optional<double> evictedAgo;
  if (const auto it = s.lastEviction.find(key); it != s.lastEviction.end())
    evictedAgo = std::chrono::duration<double>(clock_->now() - it->second).count();
  std::optional<double> createdAgo;
  if (const auto it = s.youngest.find(key); it != s.youngest.end())
    createdAgo = std::max(0.0, clock_->unixSeconds() - static_cast<double>(it->second));
  const bool byCreation = createdAgo && (!evictedAgo || *createdAgo + 2 < *evictedAgo);
  const std::optional<double> ago = byCreation ? createdAgo : evictedAgo;
  if (!ago || *ago >= interval) return std::nullopt;
  // Nothing else may bring the pod back before the interval ends: the daemon looks again then.
  retries_.push_back({api::PodName::of(*d.pod), d.plugin, interval - *ago});
  const std::string what = byCreation ? " has a pod created " + durationText(std::floor(*ago)) +
                                            " ago (an earlier eviction's replacement, a scale-up or a rollout)"
                                      : " had a pod evicted " + durationText(std::floor(*ago)) + " ago";
  return EvictResult::refused(
      Refusal::Budget, "budget \"" + s.budget.name + "\"",
      "owner " + ownerText(key.ns, key.workload) + what + ", minIntervalPerOwner " + durationText(interval));
}

// Every budget in scope must allow. Of those that do not, the refusal names the one that holds the
// pod longest (an unscheduled one, else the window that ends last), and the pod is looked at again
// when that window ends.
EvictResult BudgetGate::admit(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  const State* holding = nullptr;
  for (const State& s : states_) {
    if (!s.active || !s.budget.capsEvictions || !selects(s, d)) continue;
    if (used(s) < s.allowance) continue;
    if (!holding || (holding->window && (!s.window || s.window->end > holding->window->end))) holding = &s;
  }
  if (!holding) {
    // The per-owner rules, once the counts allow: the first budget (in policy order) that refuses.
    for (const State& s : states_)
      if (s.active && selects(s, d))
        if (std::optional<EvictResult> r = pacingRefusal(s, d)) return std::move(*r);
    return {};
  }
  if (holding->window) {
    const double left = std::chrono::duration<double>(holding->window->end - clock_->wallNow()).count();
    retries_.push_back({api::PodName::of(*d.pod), d.plugin, std::max(left, 0.0)});
  }
  return refusal(*holding);
}

void BudgetGate::evicted(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::optional<OwnerKey> key = ownerOf(*d.pod);
  for (State& s : states_) {
    if (!selects(s, d)) continue;
    // An eviction of the owner starts its interval whether or not the budget is active now.
    if (key && s.budget.minIntervalPerOwnerSeconds) s.lastEviction[*key] = clock_->now();
    if (!s.active) continue;
    // A pod that was available is not any more (one already counted stays counted once).
    if (key && s.budget.maxUnavailablePerOwner && d.pod->ready && !d.pod->isTerminating()) ++s.owners[*key].unavailable;
    if (!s.budget.capsEvictions) continue;
    ++s.runUsed;
    ++s.windowUsed;
    report(s);
  }
}

std::vector<BudgetGate::Active> BudgetGate::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Active> out;
  for (const State& s : states_) {
    if (!s.active || !s.budget.capsEvictions) continue;
    out.push_back({.name = s.budget.name,
                   .until = s.window ? policy::formatInZone(s.budget, s.window->end) : "",
                   .timeZone = s.budget.timeZone,
                   .allowance = s.allowance,
                   .used = used(s),
                   .allowanceText = allowanceText(s)});
  }
  return out;
}

std::vector<BudgetGate::Retry> BudgetGate::takeRetries() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::exchange(retries_, {});
}

std::string BudgetGate::allowanceText(const State& s) const {
  if (!s.budget.percent) return std::to_string(s.allowance);
  return std::to_string(s.budget.maxEvictions) + "% of " + std::to_string(s.podsInScope) +
         " pods, rounded down: " + std::to_string(s.allowance);
}

EvictResult BudgetGate::refusal(const State& s) const {
  const std::uint32_t left = s.allowance - std::min(s.allowance, used(s));
  std::string when =
      s.window ? "active until " + policy::formatInZone(s.budget, s.window->end) + " (" + s.budget.timeZone + ")"
               : std::string("always active");
  std::string detail = when + ": " + std::to_string(left) + " of " + std::to_string(s.allowance) + " evictions left";
  if (s.budget.percent) detail += " (" + allowanceText(s) + ")";
  if (!s.window) detail += " in this run";
  return EvictResult::refused(Refusal::Budget, "budget \"" + s.budget.name + "\"", std::move(detail));
}

void BudgetGate::report(const State& s) const {
  if (!remaining_) return;
  if (!s.active || !s.budget.capsEvictions) {
    remaining_(s.budget.name, std::nullopt);
    return;
  }
  remaining_(s.budget.name, static_cast<double>(s.allowance - std::min(s.allowance, used(s))));
}

}  // namespace kdesched::evictor
