#include "pkg/trigger/schedule.h"

#include <algorithm>

namespace kdesched::trigger {

namespace {

// Whether the seeds added to `seeds` from index `pods`/`nodes` on may have broken a rule now.
bool urgent(const Seeds& seeds, std::size_t pods, std::size_t nodes, const CarrierKeys& carriers) {
  if (seeds.nodes.size() > nodes) return true;
  for (std::size_t i = pods; i < seeds.pods.size(); ++i) {
    const PodSeed& p = seeds.pods[i];
    if (p.status || p.carriesAntiAffinity || carriers.mightSelect(p.labels)) return true;
  }
  return false;
}

}  // namespace

std::string TriggerSchedule::onEvent(const cluster::StoreEvent& event, Clock::TimePoint now) {
  if (auto* c = std::get_if<cluster::Change<api::Pod>>(&event)) {
    const bool live = c->after && c->type != cluster::EventType::Deleted;
    if (c->before && live)
      carriers_.update(*c->before, *c->after);
    else if (c->before)
      carriers_.remove(*c->before);
    else if (live)
      carriers_.add(*c->after);
  }
  const bool hadBalance = seeds_.balance;
  const std::size_t pods = seeds_.pods.size(), nodes = seeds_.nodes.size();
  std::string kind = addSeed(event, seeds_, interest_);
  if (kind.empty()) return kind;
  if (seeds_.pods.size() > pods || seeds_.nodes.size() > nodes) {
    if (!firstEvent_) firstEvent_ = now;
    if (!firstUrgent_ && urgent(seeds_, pods, nodes, carriers_)) firstUrgent_ = now;
  }
  if (seeds_.balance && !hadBalance && !balanceDue_) {
    balanceDue_ = now + seconds(config_.balanceDebounceSeconds);
    balanceFirstEvent_ = now;
  }
  return kind;
}

void TriggerSchedule::defer(Deferred d) {
  for (const Deferred& waiting : deferred_)
    if (waiting.pod == d.pod) return;
  deferred_.push_back(std::move(d));
}

void TriggerSchedule::requestBalance(Clock::TimePoint now) {
  if (balanceDue_) return;
  seeds_.balance = true;
  balanceDue_ = now + seconds(config_.balanceDebounceSeconds);
  balanceFirstEvent_ = now;
}

bool TriggerSchedule::setDeadline(const api::PodName& pod, std::optional<DeadlineEntry> entry, Clock::TimePoint now) {
  if (!entry || entry->due > now + seconds(config_.deadlineHorizonSeconds)) {
    deadlines_.erase(pod);
    return !entry;
  }
  return deadlines_.set(std::move(*entry));
}

Clock::TimePoint TriggerSchedule::batchDue() const {
  const Clock::TimePoint cap = *firstEvent_ + seconds(config_.debounceSeconds);
  const Clock::TimePoint due = firstUrgent_ ? std::min(cap, *firstUrgent_ + seconds(config_.quietSeconds)) : cap;
  return std::max(due, notBefore_);
}

void TriggerSchedule::ran(Clock::TimePoint end, Clock::Duration cost) {
  // The run started at end - cost at the latest; the budget counts from there.
  const double share = config_.cpuShare > 0 && config_.cpuShare <= 1 ? config_.cpuShare : 1;
  notBefore_ = end - cost + std::chrono::duration_cast<Clock::Duration>(cost / share);
}

std::optional<Clock::TimePoint> TriggerSchedule::nextWakeup() const {
  std::optional<Clock::TimePoint> wake;
  auto consider = [&](Clock::TimePoint t) {
    if (!wake || t < *wake) wake = t;
  };
  if (firstEvent_) consider(batchDue());
  if (balanceDue_) consider(*balanceDue_);
  for (const Deferred& d : deferred_) consider(d.due);
  if (auto d = deadlines_.next()) consider(*d);
  if (rescanDue_) consider(*rescanDue_);
  return wake;
}

DueWork TriggerSchedule::take(Clock::TimePoint now) {
  DueWork due;
  if (firstEvent_ && batchDue() <= now) {
    due.seeds.pods = std::exchange(seeds_.pods, {});
    due.seeds.nodes = std::exchange(seeds_.nodes, {});
    due.seedsFirstEvent = *firstEvent_;
    firstEvent_.reset();
    firstUrgent_.reset();
  }
  if (balanceDue_ && *balanceDue_ <= now) {
    due.balance = true;
    due.balanceFirstEvent = balanceFirstEvent_;
    balanceDue_.reset();
    seeds_.balance = false;
  }
  auto notDue =
      std::stable_partition(deferred_.begin(), deferred_.end(), [&](const Deferred& d) { return d.due <= now; });
  due.deferred.assign(std::make_move_iterator(deferred_.begin()), std::make_move_iterator(notDue));
  deferred_.erase(deferred_.begin(), notDue);
  due.deadlines = deadlines_.take(now);
  if (rescanDue_ && *rescanDue_ <= now) {
    due.rescan = true;
    rescanDue_.reset();
  }
  return due;
}

// Deadlines and rescans wait on the clock, not on work in hand: idle() ignores them, so drain()
// returns once the runs that events asked for are done.
bool TriggerSchedule::idle() const { return !firstEvent_ && !balanceDue_ && seeds_.empty() && deferred_.empty(); }

}  // namespace kdesched::trigger
