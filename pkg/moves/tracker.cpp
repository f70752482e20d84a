#include "pkg/moves/tracker.h"

#include <fmt/format.h>

#include "pkg/base/log.h"

namespace kdesched::moves {

namespace {

constexpr std::size_t kMaxFailed = 10000;  // Deployments remembered as failed: bounded
constexpr const char* kHashLabel = "pod-template-hash";

std::string hashOf(const api::Pod& pod) { return std::string(pod.labels.get(kHashLabel).value_or("")); }

// Whether `pod` belongs to Deployment `deployment` through a ReplicaSet other than the old pod's:
// the Deployment controller names its ReplicaSets `<deployment>-<pod-template-hash>`.
bool isReplacement(const api::Pod& pod, const std::string& deployment, const std::string& oldHash) {
  const api::OwnerReference* ref = pod.controllerRef();
  if (!ref || ref->kind.view() != "ReplicaSet") return false;
  const std::string hash = hashOf(pod);
  return !hash.empty() && hash != oldHash && ref->name.view() == deployment + "-" + hash;
}

double secondsBetween(Clock::TimePoint a, Clock::TimePoint b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

MoveTracker::MoveTracker(Clock& clock, evictor::EvictionApi* events, Report report, CurrentPods current)
    : clock_(clock), events_(events), report_(std::move(report)), current_(std::move(current)) {}

framework::EvictResult MoveTracker::evict(const evictor::Decision& d) {
  if (!d.move) return framework::EvictResult::success();
  const api::Pod& pod = *d.pod;
  Move m;
  m.plan = *d.move;
  m.oldPod = pod.name;
  m.oldUid = pod.uid.str();
  m.oldNode = d.node;
  m.oldHash = hashOf(pod);
  m.plugin = d.plugin;
  m.reason = d.reason;
  m.expectedNode = evictor::expectedNode(d.landing);
  m.started = clock_.now();
  m.deadline =
      m.started + std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(m.plan.deadlineSeconds));
  const std::string key = m.plan.ns + "/" + m.plan.deployment;
  if (events_)
    events_->recordEvent({.ns = m.plan.ns,
                          .podName = m.plan.deployment,
                          .podUid = m.plan.uid,
                          .type = "Normal",
                          .reason = "MoveStarted",
                          .action = "Moving",
                          .note = "kdesched restarted the rollout to move pod " + m.oldPod + " off " + m.oldNode +
                                  " (" + d.profile + "/" + d.plugin + "): " + d.reason,
                          .regardingKind = "Deployment",
                          .regardingApiVersion = "apps/v1"});
  {
    std::lock_guard<std::mutex> lock(mu_);
    moves_[key] = std::move(m);
    count_.store(moves_.size(), std::memory_order_release);
  }
  if (current_) catchUp(key, d.move->ns);
  return framework::EvictResult::success();
}

void MoveTracker::catchUp(const std::string& key, const std::string& ns) {
  const cluster::SnapshotPtr snapshot = current_();
  if (!snapshot) return;
  const Clock::TimePoint now = clock_.now();
  std::lock_guard<std::mutex> lock(mu_);
  auto it = moves_.find(key);
  if (it == moves_.end()) return;
  Move& m = it->second;
  bool oldThere = false;
  bool over = false;
  for (const api::Pod* p : snapshot->podsInNamespace(api::Symbol(ns))) {
    oldThere = oldThere || p->uid.str() == m.oldUid;
    over = observe(m, *p, false, now) || over;
  }
  if (!oldThere) over = markGone(m, now) || over;
  if (!over) return;
  Move done = std::move(m);
  moves_.erase(it);
  count_.store(moves_.size(), std::memory_order_release);
  finish(key, std::move(done), true, "", now);
}

bool MoveTracker::markGone(Move& m, Clock::TimePoint now) {
  if (!m.goneAt) {
    m.goneAt = now;
    log::info("move step", {{"deployment", m.plan.ns + "/" + m.plan.deployment},
                            {"pod", m.oldPod},
                            {"step", "old-pod-gone"},
                            {"seconds", secondsBetween(m.started, now)}});
  }
  return m.readyAt && m.goneAt;
}

bool MoveTracker::observe(Move& m, const api::Pod& p, bool deleted, Clock::TimePoint now) {
  const std::string key = m.plan.ns + "/" + m.plan.deployment;
  if (deleted) {
    if (p.uid.str() == m.oldUid) markGone(m, now);
  } else if (isReplacement(p, m.plan.deployment, m.oldHash)) {
    if (m.newPod.empty()) m.newPod = p.name;
    if (p.name == m.newPod && m.newNode.empty() && !p.nodeName.empty()) {
      m.newNode = p.nodeName.str();
      log::info("move step", {{"deployment", key},
                              {"pod", m.newPod},
                              {"node", m.newNode},
                              {"step", "scheduled"},
                              {"expected_node", m.expectedNode},
                              {"landing", m.newNode == m.expectedNode ? "held" : "moved"},
                              {"seconds", secondsBetween(m.started, now)}});
    }
    if (p.name == m.newPod && p.ready && !m.readyAt) {
      m.readyAt = now;
      log::info("move step", {{"deployment", key},
                              {"pod", m.newPod},
                              {"node", m.newNode},
                              {"step", "ready"},
                              {"seconds", secondsBetween(m.started, now)}});
    }
  }
  return m.readyAt && m.goneAt;
}

void MoveTracker::podChanged(const cluster::Change<api::Pod>& c) {
  if (count_.load(std::memory_order_acquire) == 0) return;
  const api::Pod* pod = c.after ? c.after.get() : c.before.get();
  if (!pod) return;
  const Clock::TimePoint now = clock_.now();
  std::unique_lock<std::mutex> lock(mu_);
  for (auto it = moves_.begin(); it != moves_.end();) {
    if (it->second.plan.ns != pod->ns.view() ||
        !observe(it->second, *pod, c.type == cluster::EventType::Deleted, now)) {
      ++it;
      continue;
    }
    std::string key = it->first;
    Move m = std::move(it->second);
    it = moves_.erase(it);
    finish(key, std::move(m), true, "", now);
  }
  count_.store(moves_.size(), std::memory_order_release);
}

void MoveTracker::tick() {
  if (count_.load(std::memory_order_acquire) == 0) return;
  const Clock::TimePoint now = clock_.now();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = moves_.begin(); it != moves_.end();) {
    if (now < it->second.deadline) {
      ++it;
      continue;
    }
    Move& m = it->second;
    std::string detail;
    if (m.newPod.empty())
      detail = "no new pod appeared";
    else if (!m.readyAt)
      detail = "the new pod " + m.newPod + " was not Ready";
    else
      detail = "the old pod " + m.oldPod + " was still there";
    detail += fmt::format(" {:.0f}s after the restart (the deadline)", m.plan.deadlineSeconds);
    std::string key = it->first;
    Move done = std::move(m);
    it = moves_.erase(it);
    finish(key, std::move(done), false, std::move(detail), now);
  }
  count_.store(moves_.size(), std::memory_order_release);
}

void MoveTracker::finish(const std::string& key, Move m, bool succeeded, std::string detail, Clock::TimePoint now) {
  MoveOutcome o{.succeeded = succeeded,
                .ns = m.plan.ns,
                .deployment = m.plan.deployment,
                .oldPod = m.oldPod,
                .oldNode = m.oldNode,
                .plugin = m.plugin,
                .reason = m.reason,
                .newPod = m.newPod,
                .newNode = m.newNode,
                .expectedNode = m.expectedNode,
                .readySeconds = m.readyAt ? secondsBetween(m.started, *m.readyAt) : -1,
                .seconds = secondsBetween(m.started, now),
                .detail = std::move(detail)};
  if (!succeeded) {
    if (failed_.size() >= kMaxFailed) failed_.erase(failed_.begin());
    failed_[key] = {m.plan.generation + 1, o.detail};
  }
  const std::string landing = o.newNode.empty() ? "" : o.newNode == o.expectedNode ? "held" : "moved";
  log::write(succeeded ? log::Level::Info : log::Level::Warn, succeeded ? "Moved pod" : "move failed",
             {{"deployment", key},
              {"pod", o.oldPod},
              {"node", o.oldNode},
              {"plugin", o.plugin},
              {"new_pod", o.newPod},
              {"new_node", o.newNode},
              {"expected_node", o.expectedNode},
              {"landing", landing},
              {"ready_seconds", o.readySeconds},
              {"seconds", o.seconds},
              {"detail", o.detail},
              {"step", "done"},
              {"result", succeeded ? "success" : "failed"}});
  if (events_) {
    const std::string note =
        succeeded ? fmt::format("moved pod {} off {} ({}: {}): new pod {} Ready on {} after {:.1f}s, old pod gone",
                                o.oldPod, o.oldNode, o.plugin, o.reason, o.newPod, o.newNode, o.readySeconds)
                  : fmt::format(
                        "move of pod {} off {} ({}: {}) failed: {}; not retried until the Deployment's spec "
                        "changes",
                        o.oldPod, o.oldNode, o.plugin, o.reason, o.detail);
    events_->recordEvent({.ns = o.ns,
                          .podName = o.deployment,
                          .podUid = m.plan.uid,
                          .type = succeeded ? "Normal" : "Warning",
                          .reason = succeeded ? "MoveSucceeded" : "MoveFailed",
                          .action = "Moving",
                          .note = note,
                          .regardingKind = "Deployment",
                          .regardingApiVersion = "apps/v1"});
  }
  if (report_) report_(o);
}

std::optional<std::string> MoveTracker::busy(const std::string& ns, const std::string& deployment,
                                             std::int64_t generation) {
  const std::string key = ns + "/" + deployment;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = moves_.find(key); it != moves_.end())
    return "a move of Deployment " + key + " is in flight (pod " + it->second.oldPod + ")";
  if (auto it = failed_.find(key); it != failed_.end()) {
    if (generation > it->second.generation) {
      failed_.erase(it);
      return std::nullopt;
    }
    return "the last move of Deployment " + key + " failed (" + it->second.why +
           "): not retried until its spec changes";
  }
  return std::nullopt;
}

}  // namespace kdesched::moves
