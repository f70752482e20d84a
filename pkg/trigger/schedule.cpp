#include "pkg/trigger/schedule.h"

#include <algorithm>

namespace kdesched::trigger {

std::string TriggerSchedule::onEvent(const cluster::StoreEvent& event, Clock::TimePoint now) {
  const bool hadBalance = seeds_.balance;
  std::string kind = addSeed(event, seeds_, interest_);
  if (kind.empty()) return kind;
  if (!seeds_.pods.empty() || !seeds_.nodes.empty()) {
    if (!firstEvent_) firstEvent_ = now;
    lastEvent_ = now;
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

bool TriggerSchedule::setDeadline(const std::string& pod, std::optional<DeadlineEntry> entry, Clock::TimePoint now) {
  if (!entry || entry->due > now + seconds(config_.deadlineHorizonSeconds)) {
    deadlines_.erase(pod);
    return !entry;
  }
  return deadlines_.set(std::move(*entry));
}

Clock::TimePoint TriggerSchedule::batchDue() const {
  return std::min(*firstEvent_ + seconds(config_.debounceSeconds), lastEvent_ + seconds(config_.quietSeconds));
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
