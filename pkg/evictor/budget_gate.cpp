#include "pkg/evictor/budget_gate.h"

namespace kdesched::evictor {

using framework::EvictResult;
using framework::Refusal;

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
    s.allowance = s.active ? s.budget.allowance(s.podsInScope) : 0;
    report(s);
  }
}

// Every budget in scope must allow. Of those that do not, the refusal names the one that holds the
// pod longest (an unscheduled one, else the window that ends last), and the pod is looked at again
// when that window ends.
EvictResult BudgetGate::admit(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  const State* holding = nullptr;
  for (const State& s : states_) {
    if (!s.active || !s.budget.scope.selectsPlugin(d.plugin) ||
        !s.budget.scope.selectsPod(d.pod->ns.str(), d.pod->labels))
      continue;
    if (used(s) < s.allowance) continue;
    if (!holding || (holding->window && (!s.window || s.window->end > holding->window->end))) holding = &s;
  }
  if (!holding) return {};
  if (holding->window) {
    const double left = std::chrono::duration<double>(holding->window->end - clock_->wallNow()).count();
    retries_.push_back({api::PodName::of(*d.pod), d.plugin, std::max(left, 0.0)});
  }
  return refusal(*holding);
}

void BudgetGate::evicted(const Decision& d) {
  std::lock_guard<std::mutex> lock(mu_);
  for (State& s : states_) {
    if (!s.active || !s.budget.scope.selectsPlugin(d.plugin) ||
        !s.budget.scope.selectsPod(d.pod->ns.str(), d.pod->labels))
      continue;
    ++s.runUsed;
    ++s.windowUsed;
    report(s);
  }
}

std::vector<BudgetGate::Active> BudgetGate::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Active> out;
  for (const State& s : states_) {
    if (!s.active) continue;
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
  if (!s.active) {
    remaining_(s.budget.name, std::nullopt);
    return;
  }
  remaining_(s.budget.name, static_cast<double>(s.allowance - std::min(s.allowance, used(s))));
}

}  // namespace kdesched::evictor
