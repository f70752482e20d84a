#include "pkg/trigger/triggered_runs.h"

#include <cmath>

#include "pkg/base/log.h"

namespace kdesched::trigger {
namespace {

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
}

// Mid-rollout: a sibling of the same controller is still starting or already leaving, so the
// controller is placing pods right now and the picture may change within seconds.
bool midRollout(const cluster::Snapshot& snapshot, const api::Pod& pod) {
  const api::OwnerReference* o = pod.controllerRef();
  if (!o) return false;
  for (const api::Pod* sibling : snapshot.podsOfOwner(o->uid))
    if (sibling != &pod && (sibling->isTerminating() || sibling->phase == api::PodPhase::Pending || !sibling->ready))
      return true;
  return false;
}

const api::Pod* findPod(const cluster::Snapshot& snapshot, const api::PodName& name) {
  for (const api::Pod* p : snapshot.podsInNamespace(name.ns))
    if (p->name == name.name) return p;
  return nullptr;
}

}  // namespace

TriggeredRuns::TriggeredRuns(cluster::Store& store, policy::TriggerConfig config, ScopedRunner& runner,
                             std::shared_ptr<Clock> clock, EventCounter counter, AntiFlapping* antiFlapping,
                             std::shared_ptr<ThreadCpuClock> cpu)
    : store_(store),
      config_(config),
      runner_(runner),
      clock_(std::move(clock)),
      cpu_(cpu ? std::move(cpu) : systemThreadCpuClock()),
      counter_(std::move(counter)),
      antiFlapping_(antiFlapping),
      schedule_(config) {}

TriggeredRuns::~TriggeredRuns() {
  subscription_.reset();
  stop();
}

void TriggeredRuns::setInterest(Interest interest) {
  std::lock_guard<std::mutex> lock(mu_);
  pendingPods_ = interest.pendingPods;
  schedule_.setInterest(interest);
}

void TriggeredRuns::subscribe() {
  cluster::SnapshotPtr snapshot = store_.snapshot();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (subscribed_) return;
    subscribed_ = true;
    schedule_.seedCarriers(*snapshot);
  }
  subscription_ = store_.subscribe([this](const cluster::StoreEvent& e) { onEvent(e); });
  if (deadlineFn_) rescanDeadlines();
}

std::optional<DeadlineEntry> TriggeredRuns::deadlineOf(const api::Pod& pod) {
  if (pod.isTerminating()) return std::nullopt;
  const Clock::WallTime wallNow = clock_->wallNow();
  const auto nowSeconds = std::chrono::floor<std::chrono::seconds>(wallNow.time_since_epoch()).count();
  std::optional<DeadlineEntry> entry;
  for (PodDeadline& d : deadlineFn_(pod, nowSeconds)) {
    // 50 ms past the second the plugin waits for, so its whole-second clock has reached it.
    const Clock::TimePoint due =
        clock_->now() +
        std::chrono::duration_cast<Clock::Duration>(Clock::WallTime(std::chrono::seconds(d.at)) - wallNow) +
        std::chrono::milliseconds(50);
    if (entry && entry->due < due) continue;
    if (!entry || due < entry->due) entry = DeadlineEntry{api::PodName::of(pod), {}, due};
    entry->plugins.insert(std::move(d.plugin));
  }
  return entry;
}

void TriggeredRuns::updateDeadline(const cluster::StoreEvent& e) {
  auto* c = std::get_if<cluster::Change<api::Pod>>(&e);
  if (!c) return;
  const api::PodName key = api::PodName::of(c->after ? *c->after : *c->before);
  std::optional<DeadlineEntry> entry;
  if (c->type != cluster::EventType::Deleted) entry = deadlineOf(*c->after);
  std::lock_guard<std::mutex> lock(mu_);
  schedule_.setDeadline(key, std::move(entry), clock_->now());
}

void TriggeredRuns::rescanDeadlines() {
  cluster::SnapshotPtr snapshot = store_.snapshot();
  std::vector<DeadlineEntry> found;
  for (const api::Pod* p : snapshot->pods())
    if (auto entry = deadlineOf(*p)) found.push_back(std::move(*entry));
  const Clock::TimePoint now = clock_->now();
  std::size_t kept = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (DeadlineEntry& d : found) {
      const api::PodName pod = d.pod;
      kept += schedule_.setDeadline(pod, std::move(d), now) ? 1 : 0;
    }
    schedule_.scheduleRescan(now + seconds(config_.deadlineHorizonSeconds / 2));
  }
  log::debug("deadline queue rescanned", {{"pods_with_deadlines", found.size()}, {"queued_within_horizon", kept}});
}

void TriggeredRuns::start() {
  subscribe();
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { loop(); });
}

void TriggeredRuns::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TriggeredRuns::wake() { cv_.notify_all(); }

void TriggeredRuns::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || (!busy_ && schedule_.idle()); });
}

std::optional<Clock::TimePoint> TriggeredRuns::nextWakeup() {
  std::lock_guard<std::mutex> lock(mu_);
  return schedule_.nextWakeup();
}

void TriggeredRuns::retryLater(const api::PodName& pod, const std::set<std::string>& plugins, double secs) {
  const Clock::TimePoint now = clock_->now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    const Clock::TimePoint due = now + seconds(secs);
    schedule_.defer({.pod = pod, .plugins = plugins, .due = due, .firstEvent = due, .retry = true});
  }
  cv_.notify_all();
}

void TriggeredRuns::onEvent(const cluster::StoreEvent& e) {
  // Replacements of pods we evicted: where did they land? (anti-flapping)
  if (antiFlapping_) {
    if (auto* c = std::get_if<cluster::Change<api::Pod>>(&e);
        c && c->after && !c->after->nodeName.empty() && (!c->before || c->before->nodeName.empty())) {
      if (const api::OwnerReference* o = c->after->controllerRef())
        antiFlapping_->replacementBound(o->uid, c->after->nodeName.str(),
                                        {c->after->ns.str(), c->after->name, c->after->uid.str()});
    }
  }
  if (deadlineFn_) updateDeadline(e);
  const Clock::TimePoint now = clock_->now();
  std::string kind;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    kind = schedule_.onEvent(e, now);
  }
  if (kind.empty()) return;
  if (counter_) counter_(kind);
  cv_.notify_all();
}

std::vector<Deferred> TriggeredRuns::deferMidRollout(const cluster::Snapshot& snapshot, framework::CycleScope& scope,
                                                     Clock::TimePoint firstEvent, Clock::TimePoint now) const {
  std::vector<Deferred> deferred;
  if (config_.rolloutGraceSeconds <= 0 || !scope.pods) return deferred;
  auto kept = std::make_shared<api::PodNames>();
  for (const api::PodName& key : *scope.pods) {
    const api::Pod* pod = findPod(snapshot, key);
    if (!pod) continue;
    if (!midRollout(snapshot, *pod)) {
      kept->insert(key);
      continue;
    }
    log::info(
        "deferring a candidate whose controller is mid-rollout",
        {{"pod", key.key()}, {"grace_seconds", static_cast<long long>(std::lround(config_.rolloutGraceSeconds))}});
    std::set<std::string> plugins(scope.plugins.begin(), scope.plugins.end());
    deferred.push_back({key, plugins, now + seconds(config_.rolloutGraceSeconds), firstEvent});
  }
  scope.pods = kept;
  return deferred;
}

bool TriggeredRuns::runDue() {
  const Clock::TimePoint now = clock_->now();
  DueWork due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_) return false;
    due = schedule_.take(now);
    if (due.empty()) return false;
    busy_ = true;
  }
  run(std::move(due), now);
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
  }
  cv_.notify_all();
  return true;
}

void TriggeredRuns::run(DueWork due, Clock::TimePoint now) {
  // The batch's cost, in this thread's CPU time: indexing the cache, choosing the pods, evaluating
  // them in the runner; not the waits (for eviction answers, for a core).
  const Clock::Duration cpu0 = cpu_->now();
  RunSnapshot taken = runner_.snapshot();
  if (!taken.snapshot) taken.snapshot = store_.snapshot();
  const cluster::SnapshotPtr snapshot = taken.snapshot;
  if (!due.seeds.pods.empty() || !due.seeds.nodes.empty()) {
    Scope s = affectedPods(*snapshot, due.seeds);
    framework::CycleScope scope;
    scope.runBalance = false;
    scope.plugins.assign(s.plugins.begin(), s.plugins.end());
    scope.pods = std::make_shared<const api::PodNames>(std::move(s.pods));
    std::vector<Deferred> later = deferMidRollout(*snapshot, scope, due.seedsFirstEvent, now);
    if (!later.empty()) {
      std::lock_guard<std::mutex> lock(mu_);
      for (Deferred& d : later) schedule_.defer(std::move(d));
    }
    if (s.balance) {
      std::lock_guard<std::mutex> lock(mu_);
      schedule_.requestBalance(now);
    }
    if (!scope.pods->empty() && !scope.plugins.empty()) {
      log::info("triggered run", {{"pods", scope.pods->size()},
                                  {"plugins", join(s.plugins)},
                                  {"seeds_pods", due.seeds.pods.size()},
                                  {"seeds_nodes", due.seeds.nodes.size()}});
      runner_.runScoped(scope, due.seedsFirstEvent, taken);
    }
    const Clock::Duration cost = std::max(Clock::Duration(0), cpu_->now() - cpu0);
    std::lock_guard<std::mutex> lock(mu_);
    schedule_.ran(clock_->now(), cost);
  }
  if (!due.deferred.empty()) {
    framework::CycleScope scope;
    scope.runBalance = false;
    auto pods = std::make_shared<api::PodNames>();
    std::set<std::string> plugins;
    Clock::TimePoint earliest = due.deferred.front().firstEvent;
    std::size_t retried = 0;
    for (const Deferred& d : due.deferred) {
      pods->insert(d.pod);
      plugins.insert(d.plugins.begin(), d.plugins.end());
      earliest = std::min(earliest, d.firstEvent);
      retried += d.retry ? 1 : 0;
    }
    scope.plugins.assign(plugins.begin(), plugins.end());
    scope.pods = pods;
    log::info(
        retried == due.deferred.size() ? "triggered run after a refusal's wait" : "triggered run after rollout grace",
        {{"pods", pods->size()}, {"retried", retried}});
    runner_.runScoped(scope, earliest);
  }
  if (!due.deadlines.empty()) runDeadlines(due.deadlines);
  if (due.rescan) rescanDeadlines();
  if (due.balance) {
    framework::CycleScope scope;
    scope.runDeschedule = false;
    log::info("triggered balance run");
    runner_.runScoped(scope, due.balanceFirstEvent);
    if (pendingPods_) runPending(due.balanceFirstEvent);
  }
}

void TriggeredRuns::runPending(Clock::TimePoint firstEvent) {
  const cluster::SnapshotPtr snapshot = store_.snapshot();
  auto pods = std::make_shared<api::PodNames>();
  for (const api::Pod* p : snapshot->pods())
    if (p->nodeName.empty() && p->phase == api::PodPhase::Pending && !p->isTerminating())
      pods->insert(api::PodName::of(*p));
  if (pods->empty()) return;
  framework::CycleScope scope;
  scope.runBalance = false;
  scope.plugins = {kMakeRoomPlugin};
  scope.pods = pods;
  log::info("triggered run for pending pods", {{"pods", pods->size()}});
  runner_.runScoped(scope, firstEvent);
}

void TriggeredRuns::runDeadlines(const std::vector<DeadlineEntry>& due) {
  framework::CycleScope scope;
  scope.runBalance = false;
  auto pods = std::make_shared<api::PodNames>();
  std::set<std::string> plugins;
  for (const DeadlineEntry& d : due) {
    pods->insert(d.pod);
    plugins.insert(d.plugins.begin(), d.plugins.end());
  }
  scope.plugins.assign(plugins.begin(), plugins.end());
  scope.pods = pods;
  log::info("deadline run", {{"pods", pods->size()}, {"plugins", join(plugins)}});
  runner_.runScoped(scope, due.front().due);
  // A pod the run left (refused, or another criterion's time still to come) may have a later
  // deadline: queue it again.
  cluster::SnapshotPtr snapshot = store_.snapshot();
  for (const DeadlineEntry& d : due) {
    const api::Pod* pod = findPod(*snapshot, d.pod);
    if (!pod) continue;
    std::optional<DeadlineEntry> next = deadlineOf(*pod);
    std::lock_guard<std::mutex> lock(mu_);
    schedule_.setDeadline(d.pod, std::move(next), clock_->now());
  }
}

void TriggeredRuns::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    const std::optional<Clock::TimePoint> wake = schedule_.nextWakeup();
    if (!wake) {
      cv_.wait(lock);
      continue;
    }
    const Clock::TimePoint now = clock_->now();
    if (*wake > now) {
      cv_.wait_for(lock, *wake - now);
      continue;
    }
    lock.unlock();
    runDue();
    lock.lock();
  }
}

}  // namespace kdesched::trigger
