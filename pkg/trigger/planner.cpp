#include "pkg/trigger/planner.h"

#include <spdlog/spdlog.h>

#include <ctime>

namespace kdesched::trigger {
namespace {

std::chrono::steady_clock::duration secs(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out;
}

}  // namespace

Planner::Planner(cluster::Store& store, TriggerConfig config, Runner runner, EventCounter counter,
                 AntiFlapping* antiFlapping)
    : store_(store),
      config_(config),
      runner_(std::move(runner)),
      counter_(std::move(counter)),
      antiFlapping_(antiFlapping) {}

Planner::~Planner() { stop(); }

void Planner::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (started_) return;
  started_ = true;
  store_.subscribe([this](const cluster::StoreEvent& e) { onEvent(e); });
  thread_ = std::thread([this] { loop(); });
}

void Planner::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Planner::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] {
    return stopping_ || (!busy_ && !firstEvent_ && !balanceDue_ && seeds_.empty() && deferred_.empty());
  });
}

void Planner::retryLater(const std::string& pod, const std::set<std::string>& plugins, double seconds) {
  auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    for (const auto& d : deferred_)
      if (d.pod == pod) return;  // already queued
    deferred_.push_back({pod, plugins, now + secs(seconds), now});
  }
  cv_.notify_all();
}

void Planner::onEvent(const cluster::StoreEvent& e) {
  // Replacements of pods we evicted: where did they land? (anti-flapping)
  if (antiFlapping_) {
    if (auto* c = std::get_if<cluster::Change<api::Pod>>(&e);
        c && c->after && !c->after->nodeName.empty() && (!c->before || c->before->nodeName.empty())) {
      if (const api::OwnerReference* o = c->after->controllerRef())
        antiFlapping_->replacementBound(o->uid, c->after->nodeName.str(),
                                        {c->after->ns.str(), c->after->name, c->after->uid});
    }
  }
  auto now = std::chrono::steady_clock::now();
  std::string kind;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    Seeds before = seeds_;
    bool hadBalance = seeds_.balance;
    kind = addSeed(e, seeds_);
    if (kind.empty()) return;
    if (!seeds_.pods.empty() || !seeds_.nodes.empty()) {
      if (!firstEvent_) firstEvent_ = now;
      lastEvent_ = now;
    }
    if (seeds_.balance && !hadBalance && !balanceDue_) {
      balanceDue_ = now + secs(config_.balanceDebounceSeconds);
      balanceFirstEvent_ = now;
    }
    (void)before;
  }
  if (counter_) counter_(kind);
  cv_.notify_all();
}

void Planner::deferMidRollout(const cluster::Snapshot& snapshot, framework::CycleScope& scope, TimePoint firstEvent) {
  if (config_.rolloutGraceSeconds <= 0 || !scope.pods) return;
  auto kept = std::make_shared<std::unordered_set<std::string>>();
  for (const std::string& key : *scope.pods) {
    auto slash = key.find('/');
    const api::Pod* pod = nullptr;
    for (const api::Pod* p : snapshot.podsInNamespace(api::Symbol(key.substr(0, slash))))
      if (p->name == key.substr(slash + 1)) pod = p;
    if (!pod) continue;
    // Mid-rollout: a sibling of the same controller is still starting or already leaving, so the
    // controller is placing pods right now and the picture may change within seconds.
    bool midRollout = false;
    if (const api::OwnerReference* o = pod->controllerRef()) {
      for (const api::Pod* sibling : snapshot.podsOfOwner(o->uid))
        if (sibling != pod && (sibling->isTerminating() || sibling->phase == api::PodPhase::Pending || !sibling->ready))
          midRollout = true;
    }
    if (midRollout) {
      spdlog::info("msg=\"deferring a candidate whose controller is mid-rollout\" pod={} grace_seconds={:.0f}", key,
                   config_.rolloutGraceSeconds);
      std::set<std::string> plugins(scope.plugins.begin(), scope.plugins.end());
      deferred_.push_back(
          {key, plugins, std::chrono::steady_clock::now() + secs(config_.rolloutGraceSeconds), firstEvent});
    } else {
      kept->insert(key);
    }
  }
  scope.pods = kept;
}

void Planner::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    auto now = std::chrono::steady_clock::now();
    std::optional<TimePoint> wake;
    auto consider = [&](TimePoint t) {
      if (!wake || t < *wake) wake = t;
    };
    // A batch is due once events pause for `quiet`, and at the latest `debounce` after its first.
    auto batchDue = [&] {
      return std::min(*firstEvent_ + secs(config_.debounceSeconds), lastEvent_ + secs(config_.quietSeconds));
    };
    if (firstEvent_) consider(batchDue());
    if (balanceDue_) consider(*balanceDue_);
    for (const auto& d : deferred_) consider(d.due);
    if (!wake) {
      cv_.wait(lock);
      continue;
    }
    if (*wake > now) {
      cv_.wait_until(lock, *wake);
      continue;
    }

    // Take what is due.
    busy_ = true;
    Seeds seeds;
    std::optional<TimePoint> first;
    if (firstEvent_ && batchDue() <= now) {
      seeds.pods = std::move(seeds_.pods);
      seeds.nodes = std::move(seeds_.nodes);
      seeds_.pods.clear();
      seeds_.nodes.clear();
      first = firstEvent_;
      firstEvent_.reset();
    }
    bool balance = false;
    TimePoint balanceFirst{};
    if (balanceDue_ && *balanceDue_ <= now) {
      balance = true;
      balanceFirst = balanceFirstEvent_;
      balanceDue_.reset();
      seeds_.balance = false;
    }
    std::vector<Deferred> due;
    for (auto it = deferred_.begin(); it != deferred_.end();) {
      if (it->due <= now) {
        due.push_back(*it);
        it = deferred_.erase(it);
      } else {
        ++it;
      }
    }
    lock.unlock();

    cluster::SnapshotPtr snapshot = store_.snapshot();
    if (!seeds.empty()) {
      Scope s = affectedPods(*snapshot, seeds);
      framework::CycleScope scope;
      scope.runBalance = false;
      scope.plugins.assign(s.plugins.begin(), s.plugins.end());
      scope.pods = std::make_shared<const std::unordered_set<std::string>>(std::move(s.pods));
      deferMidRollout(*snapshot, scope, *first);
      if (!scope.pods->empty() && !scope.plugins.empty()) {
        spdlog::info("msg=\"triggered run\" pods={} plugins={} seeds_pods={} seeds_nodes={}", scope.pods->size(),
                     join(s.plugins), seeds.pods.size(), seeds.nodes.size());
        runner_(scope, *first);
      }
    }
    if (!due.empty()) {
      framework::CycleScope scope;
      scope.runBalance = false;
      auto pods = std::make_shared<std::unordered_set<std::string>>();
      std::set<std::string> plugins;
      TimePoint earliest = due.front().firstEvent;
      for (const auto& d : due) {
        pods->insert(d.pod);
        plugins.insert(d.plugins.begin(), d.plugins.end());
        earliest = std::min(earliest, d.firstEvent);
      }
      scope.plugins.assign(plugins.begin(), plugins.end());
      scope.pods = pods;
      spdlog::info("msg=\"triggered run after rollout grace\" pods={}", pods->size());
      runner_(scope, earliest);
    }
    if (balance) {
      framework::CycleScope scope;
      scope.runDeschedule = false;
      spdlog::info("msg=\"triggered balance run\"");
      runner_(scope, balanceFirst);
    }

    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace kdesched::trigger
