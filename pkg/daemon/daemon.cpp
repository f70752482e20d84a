#include "pkg/daemon/daemon.h"

#include <malloc.h>
#include <pthread.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "pkg/base/log.h"
#include "pkg/daemon/cycle_runner.h"
#include "pkg/daemon/live_moves.h"
#include "pkg/daemon/runtime.h"
#include "pkg/daemon/stale_wait.h"
#include "pkg/evictor/api_sink.h"
#include "pkg/evictor/budget_gate.h"
#include "pkg/trigger/antiflapping.h"
#include "pkg/trigger/interest.h"
#include "pkg/trigger/triggered_runs.h"

namespace kdesched::daemon {
namespace {

// How often a wait for a relist looks at the caches again.
constexpr std::chrono::milliseconds kRelistPoll{50};

Cancellation& shutdown() {
  static Cancellation c;
  return c;
}

void startSignalThread() {
  std::thread([] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    if (sigwait(&set, &sig) == 0) {
      log::info("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
      shutdown().cancel();
    }
  }).detach();
}

// Anti-flapping only where cycles repeat: a one-shot run has no history to learn from.
std::unique_ptr<trigger::AntiFlapping> makeAntiFlapping(const Options& o, Runtime& rt) {
  if (o.intervalSeconds <= 0) return nullptr;
  metrics::Metrics* m = rt.metrics();
  evictor::EvictionApi& events = rt.asyncEvents();
  return std::make_unique<trigger::AntiFlapping>(
      rt.engine().extension.antiFlapping, rt.sharedClock(),
      [m, &events](const trigger::AntiFlapping::PodRef& pod, int flaps, double backoff) {
        if (m) m->evictionSuppressed("gave-up");
        events.recordEvent({pod.ns, pod.name, pod.uid, "Warning", "DeschedulingGaveUp", "Descheduled",
                            "kdesched evicted pods of this workload " + std::to_string(flaps) +
                                " times and the same situation came back; backing off for " +
                                std::to_string(static_cast<long long>(backoff)) + "s"});
      },
      [m](const std::string& reason) {
        if (m) m->evictionSuppressed(reason);
      });
}

// Disruption budgets in every mode that has them configured; the gauge follows each active one.
std::unique_ptr<evictor::BudgetGate> makeBudgets(Runtime& rt) {
  const std::vector<policy::Budget>& budgets = rt.engine().extension.budgets;
  if (budgets.empty()) return nullptr;
  metrics::Metrics* m = rt.metrics();
  return std::make_unique<evictor::BudgetGate>(budgets, rt.sharedClock(),
                                               [m](const std::string& name, std::optional<double> remaining) {
                                                 if (m) m->budgetRemaining(name, remaining);
                                               });
}

// Event triggers only in interval mode, when the policy leaves them on.
std::unique_ptr<trigger::TriggeredRuns> startTriggeredRuns(const Options& o, Runtime& rt, CycleRunner& runner,
                                                           trigger::AntiFlapping* antiFlapping) {
  const policy::TriggerConfig& c = rt.engine().extension.triggers;
  if (o.intervalSeconds <= 0 || !c.enabled) return nullptr;
  metrics::Metrics* m = rt.metrics();
  auto triggered = std::make_unique<trigger::TriggeredRuns>(
      rt.store(), c, runner, rt.sharedClock(),
      [m](const std::string& kind) {
        if (m) m->triggerEvent(kind);
      },
      antiFlapping);
  runner.setCooldownRetries(triggered.get());
  triggered->setInterest(trigger::interestOf(rt.engine().profiles));
  triggered->setDeadlines(trigger::deadlinesOf(rt.engine().profiles));
  triggered->start();
  log::info("event triggers on", {{"debounce_seconds", c.debounceSeconds},
                                  {"quiet_seconds", c.quietSeconds},
                                  {"cpu_share", c.cpuShare},
                                  {"balance_debounce_seconds", c.balanceDebounceSeconds},
                                  {"rollout_grace_seconds", c.rolloutGraceSeconds}});
  return triggered;
}

enum class Relist { Done, Stopped, TimedOut };

// A cache that lost its watch history (410 Gone) is out of sync until its relist completes: wait
// for it (as for the first sync) rather than decide from what it still holds.
Relist awaitRelist(Runtime& rt, Cancellation& stop, double timeoutSeconds) {
  std::string pending = rt.health().relisting();
  log::info("waiting for the cache to relist before the cycle", {{"resources", pending}});
  const Clock::TimePoint deadline = rt.clock().now() + seconds(timeoutSeconds);
  while (!rt.health().relisting().empty() && !stop.cancelled() && rt.clock().now() < deadline)
    rt.clock().sleepFor(kRelistPoll, &stop);
  if (stop.cancelled()) return Relist::Stopped;
  if (pending = rt.health().relisting(); !pending.empty()) {
    log::error("the cache did not re-sync; cycle skipped",
               {{"resources", pending}, {"timeout_seconds", timeoutSeconds}});
    return Relist::TimedOut;
  }
  log::info("cache relisted");
  return Relist::Done;
}

// Cycles on the interval (non-sliding: the period is measured from each cycle's start), or the one
// cycle of a one-shot run. Returns the exit code so far.
int cycleLoop(const Options& o, Runtime& rt, CycleRunner& runner, Cancellation& stop, std::atomic<bool>& lost) {
  Clock& clock = rt.clock();
  while (!stop.cancelled()) {
    Clock::TimePoint start = clock.now();
    if (!rt.isLeader()) {
      lost = true;
      break;
    }
    if (const auto stale = rt.health().staleResources(); !stale.empty()) {
      // A one-shot run never decides on a cache it cannot trust, and has no later cycle.
      if (o.intervalSeconds <= 0) {
        log::error("cache stale; no cycle", {{"stale", rt.health().stale()}, {"exit", kExitFailure}});
        return kExitFailure;
      }
      if (!awaitFresh(
              clock, stop, [&rt] { return rt.health().staleResources(); }, kRelistPoll))
        break;
      continue;  // from the top: leadership and a relist may have changed meanwhile
    }
    if (!rt.health().relisting().empty()) {
      const Relist r = awaitRelist(rt, stop, o.syncTimeoutSeconds);
      if (r == Relist::Stopped) break;
      if (r == Relist::TimedOut) {
        if (o.intervalSeconds <= 0) return kExitFailure;
        const Clock::Duration wait = start + seconds(o.intervalSeconds) - clock.now();
        if (wait > Clock::Duration::zero() && !clock.sleepFor(wait, &stop)) break;
        continue;
      }
      // The interval counts from the cycle's real start: a cycle right after this one could still
      // see the pods it evicts (their deletion not yet watched) and evict them again (404).
      start = clock.now();
    }
    // Not run: a relist began just now, leadership was lost or shutdown came; the loop's top sees to it.
    if (!runner.runPeriodic().ran) continue;
    if (o.intervalSeconds <= 0) break;
    // The cycle's views, plans and landing estimates are freed now. glibc keeps freed chunks
    // inside its arenas, and under churn the daemon's RSS crept by about 0.3 MiB a minute while
    // its heap grew about half of that (bench/results/2026-12-07-heap-S2): give the free pages back,
    // once an interval. It holds each arena's lock for about 45 us at S2 (absorb_bench's
    // BM_MallocTrimAfterChurn).
    const Clock::TimePoint trimStart = clock.now();
    malloc_trim(0);
    log::debug("free memory returned to the system", {{"seconds", clock.secondsSince(trimStart)}});
    const Clock::Duration wait = start + seconds(o.intervalSeconds) - clock.now();
    if (wait > Clock::Duration::zero() && !clock.sleepFor(wait, &stop)) break;
  }
  return kExitOk;
}

}  // namespace

void blockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void unblockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

int run(const Options& o) {
  startSignalThread();
  Cancellation& stop = shutdown();
  const std::shared_ptr<Clock> clock = systemClock();
  std::unique_ptr<Runtime> rt = Runtime::create(o, clock, stop);
  if (!rt) return kExitBadInput;
  switch (rt->startCache()) {
    case Runtime::Sync::Synced: break;
    case Runtime::Sync::Stopped: return rt->finish(kExitOk);
    case Runtime::Sync::TimedOut:
    case Runtime::Sync::Refused: return rt->finish(kExitFailure);
  }
  std::atomic<bool> lost{false};
  if (!rt->lead([&] {
        lost = true;
        stop.cancel();
      }))
    return rt->finish(kExitOk);

  if (!rt->startUsage()) return rt->finish(kExitOk);

  const engine::Engine& engine = rt->engine();
  const policy::BlockedEventsConfig& be = engine.extension.blockedEvents;
  evictor::BlockedEvents blocked(
      {.enabled = be.enabled, .period = seconds(be.periodSeconds), .perMinute = be.perMinute}, *clock);
  evictor::ApiSink apiSink(rt->asyncEvents(),
                           {.gracePeriodSeconds = engine.policy.gracePeriodSeconds,
                            .failureEvents = engine.policy.evictionFailureEventNotification.value_or(false),
                            .clock = clock.get(),
                            .repeatQuiet = std::chrono::seconds(600),
                            .leader = rt->leadership(),
                            .blocked = &blocked});
  evictor::DryRunSink dryRunSink;
  std::unique_ptr<metrics::EvictionMetrics> evictionMetrics;
  std::unique_ptr<metrics::PluginTimer> pluginTimer;
  if (metrics::Metrics* m = rt->metrics()) {
    evictionMetrics = std::make_unique<metrics::EvictionMetrics>(*m, *clock);
    pluginTimer = std::make_unique<metrics::PluginTimer>(*m);
  }
  evictor::RecentEvictions recent(clock);
  std::unique_ptr<LiveMoves> moves = LiveMoves::start(engine.extension.moves, *rt, o.dryRun);
  std::vector<evictor::Sink*> observers;
  if (evictionMetrics) observers.push_back(evictionMetrics.get());
  if (moves && moves->observer()) observers.push_back(moves->observer());
  std::unique_ptr<trigger::AntiFlapping> antiFlapping = makeAntiFlapping(o, *rt);
  std::unique_ptr<evictor::BudgetGate> budgets = makeBudgets(*rt);
  CycleRunner runner({.store = rt->store(),
                      .engine = engine,
                      .cache = rt->health(),
                      .stop = stop,
                      .primary = o.dryRun ? static_cast<evictor::Sink&>(dryRunSink) : apiSink,
                      .clock = clock,
                      .observers = observers,
                      .concurrency = o.dryRun ? 1 : static_cast<std::size_t>(o.evictionConcurrency),
                      .leader = rt->leadership(),
                      .recent = o.dryRun ? nullptr : &recent,  // a dry run deletes nothing
                      .antiFlapping = antiFlapping.get(),
                      .budgets = budgets.get(),
                      .pluginObserver = pluginTimer.get(),
                      .metrics = rt->metrics(),
                      .ownerCooldownSeconds = engine.extension.antiFlapping.ownerCooldownSeconds,
                      .usage = rt->usage(),
                      .moves = moves ? moves->advisor() : nullptr});
  std::unique_ptr<trigger::TriggeredRuns> triggered = startTriggeredRuns(o, *rt, runner, antiFlapping.get());

  int exitCode = cycleLoop(o, *rt, runner, stop, lost);
  if (triggered) triggered->stop();
  if (o.intervalSeconds <= 0)
    exitCode = oneShotExitCode(exitCode, runner.hardFailures(), stop.cancelled(), o.failOnEvictionErrors);
  if (lost) {
    log::error("leadership lost; exiting so the replica restarts clean");
    exitCode = kExitFailure;
  }
  return rt->finish(exitCode);
}

int oneShotExitCode(int exitCode, std::size_t hardFailures, bool stopped, bool failOnEvictionErrors) {
  if (exitCode != kExitOk || hardFailures == 0 || stopped) return exitCode;
  if (!failOnEvictionErrors) {
    log::warn("evictions failed", {{"count", hardFailures},
                                   {"exit", kExitOk},
                                   {"hint",
                                    "see the eviction failed lines above: forbidden (RBAC) or API server "
                                    "errors; --fail-on-eviction-errors makes this exit 1"}});
    return kExitOk;
  }
  log::error("evictions failed",
             {{"count", hardFailures},
              {"exit", kExitFailure},
              {"hint", "see the eviction failed lines above: forbidden (RBAC) or API server errors"}});
  return kExitFailure;
}

}  // namespace kdesched::daemon
