// The live modes' one runner, with the plan sink (or a scripted API) as the primary and a fake
// clock: periodic and scoped runs, the gates, settled counts, cooldown requeue, the finish lines.
#include "pkg/daemon/cycle_runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/api/timestamp.h"
#include "pkg/base/log.h"
#include "pkg/kube/cache_health.h"
#include "pkg/metrics/metrics.h"
#include "test/unit/testing/builders.h"
#include "test/unit/testing/fake_clock.h"
#include "test/unit/testing/harness.h"

namespace kdesched::testing {
namespace {

using daemon::CycleRunner;
using daemon::CycleRunnerParts;
using daemon::RunReport;
using framework::EvictResult;
using framework::Refusal;
using ::testing::HasSubstr;

const char* kAnti = "RemovePodsViolatingInterPodAntiAffinity";

// A primary that answers like the API server would, from any thread: `failing` pods are refused
// with `failure`; every eviction takes `latency` on the fake clock.
class ScriptedApi : public evictor::Sink {
 public:
  ScriptedApi(std::shared_ptr<FakeClock> clock, double latency = 0) : clock_(std::move(clock)), latency_(latency) {}
  EvictResult evict(const evictor::Decision& d) override {
    clock_->advanceSeconds(latency_);
    std::lock_guard<std::mutex> lock(mu_);
    if (failing.count(d.pod->name)) return EvictResult::apiRefused(Refusal::ApiError, failure, "api: test", "refused");
    evicted.push_back(d.pod->name);
    return EvictResult::success();
  }
  void refused(const evictor::RefusedDecision& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    refusals.push_back(r.wanted.pod->name + " " + std::string(framework::toString(r.result.refusal)));
  }
  std::set<std::string> failing;
  framework::ApiFailure failure = framework::ApiFailure::Conflict;
  std::vector<std::string> evicted;
  std::vector<std::string> refusals;

 private:
  std::shared_ptr<FakeClock> clock_;
  double latency_;
  std::mutex mu_;
};

// A gate that runs `action` when it first admits something (to change the world mid-run).
struct ActionGate : evictor::EvictionGate {
  std::function<void()> action;
  EvictResult admit(const evictor::Decision&) override {
    if (action) std::exchange(action, nullptr)();
    return {};
  }
  void evicted(const evictor::Decision&) override {}
};

struct Fixture {
  cluster::Store store;
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  kube::CacheHealth health;
  Cancellation stop;
  evictor::PlanSink plan;
  Result<engine::Engine> engine = engineFor(policyWith(kAnti, "deschedule"));
  struct : evictor::Leadership {
    bool leader = true;
    bool isLeader() const override { return leader; }
  } leadership;

  // `violators` payment pods (one owner each, unless `owner` is set) next to an order pod on n1.
  explicit Fixture(int violators = 1, const std::string& owner = "") {
    EXPECT_TRUE(engine.isOk()) << (engine.isOk() ? "" : engine.error());
    store.upsert(NodeBuilder("n1").build());
    store.upsert(NodeBuilder("n2").build());
    store.upsert(PodBuilder("order").app("order").node("n1").build());
    for (int i = 0; i < violators; ++i) {
      PodBuilder p("payment-" + std::to_string(i));
      p.app("payment").node("n1").antiAffinity("app", "order");
      if (!owner.empty()) p.ownerUid("ReplicaSet", owner, owner + "-uid");
      store.upsert(p.build());
    }
  }
  CycleRunnerParts parts(evictor::Sink& primary) {
    return {.store = store,
            .engine = *engine,
            .cache = health,
            .stop = stop,
            .primary = primary,
            .clock = clock,
            .leader = &leadership};
  }
};

TEST(CycleRunner, APeriodicRunEvictsThroughTheSink) {
  Fixture f;
  CycleRunner runner(f.parts(f.plan));
  RunReport r = runner.runOnce();
  EXPECT_TRUE(r.ran);
  EXPECT_EQ(r.evicted, 1u);
  EXPECT_EQ(r.refused, 0u);
  EXPECT_EQ(r.pods, 2u);
  EXPECT_EQ(r.cycle.nodes, 2u);
  ASSERT_EQ(f.plan.evictions().size(), 1u);
  EXPECT_EQ(f.plan.evictions()[0].pod->name, "payment-0");
}

TEST(CycleRunner, AScopedRunLooksOnlyAtItsPods) {
  Fixture f(2);
  CycleRunner runner(f.parts(f.plan));
  framework::CycleScope scope;
  scope.runBalance = false;
  scope.plugins = {kAnti};
  scope.pods = podNames({"default/payment-1"});
  RunReport r = runner.runOnce(scope);
  EXPECT_EQ(r.evicted, 1u);
  ASSERT_EQ(f.plan.evictions().size(), 1u);
  EXPECT_EQ(f.plan.evictions()[0].pod->name, "payment-1");
}

TEST(CycleRunner, TheRunItselfIsTimedByTheInjectedClock) {
  Fixture f(2);
  ScriptedApi api(f.clock, 0.25);  // each eviction takes 250 ms
  CycleRunner runner(f.parts(api));
  EXPECT_DOUBLE_EQ(runner.runOnce().cycle.seconds, 0.5);
}

// After each periodic cycle the eviction series of a node gone from the cache for an hour go
// (metrics::Metrics::forgetDepartedNodes), timed by the runner's clock.
TEST(CycleRunner, PeriodicRunsDropTheEvictionSeriesOfANodeGoneForAnHour) {
  Fixture f;
  metrics::Metrics m("test", {});
  m.podEvicted("success", kAnti, "default", "default", "n1");
  m.podEvicted("success", kAnti, "default", "default", "reclaimed");
  CycleRunnerParts parts = f.parts(f.plan);
  parts.metrics = &m;
  CycleRunner runner(parts);
  runner.runPeriodic();
  f.clock->advance(std::chrono::minutes(59));
  runner.runPeriodic();
  EXPECT_THAT(m.serialize(), HasSubstr(R"(node="reclaimed")"));
  f.clock->advance(std::chrono::minutes(1));
  runner.runPeriodic();
  const std::string text = m.serialize();
  EXPECT_THAT(text, ::testing::Not(HasSubstr(R"(node="reclaimed")")));
  EXPECT_THAT(text, HasSubstr(R"(node="n1")"));
}

// ...and so do the workload series idle for the configured window (kdesched_owner_evictions_total),
// on the same clock, without an eviction to prompt it.
TEST(CycleRunner, PeriodicRunsDropTheWorkloadSeriesIdleForTheWindow) {
  Fixture f;
  metrics::Metrics m("test", {}, metrics::ProcSource::system(), {.idle = std::chrono::minutes(30), .maxSeries = 10});
  m.ownerEvicted("default", {"Deployment", "payment"}, kAnti, f.clock->now());
  CycleRunnerParts parts = f.parts(f.plan);
  parts.metrics = &m;
  CycleRunner runner(parts);
  f.clock->advance(std::chrono::minutes(29));
  runner.runPeriodic();
  EXPECT_THAT(m.serialize(), HasSubstr(R"(owner_name="payment")"));
  f.clock->advance(std::chrono::minutes(1));
  runner.runPeriodic();
  EXPECT_THAT(m.serialize(), ::testing::Not(HasSubstr(R"(owner_name="payment")")));
}

struct SkipCase {
  std::string name;
  std::function<void(Fixture&)> before;
  std::string why;
};

class CycleRunnerSkips : public ::testing::TestWithParam<SkipCase> {};

TEST_P(CycleRunnerSkips, WhenAGateWouldRefuseEverything) {
  Fixture f;
  CycleRunner runner(f.parts(f.plan));
  GetParam().before(f);
  RunReport r = runner.runOnce();
  EXPECT_FALSE(r.ran);
  EXPECT_THAT(r.skipReason, HasSubstr(GetParam().why));
  EXPECT_TRUE(f.plan.evictions().empty());
  EXPECT_TRUE(f.plan.refusals().empty());
}

INSTANTIATE_TEST_SUITE_P(
    Table, CycleRunnerSkips,
    ::testing::Values(SkipCase{"shutdown", [](Fixture& f) { f.stop.cancel(); }, "shutting down"},
                      SkipCase{"notLeader", [](Fixture& f) { f.leadership.leader = false; }, "not the leader"},
                      SkipCase{"relisting", [](Fixture& f) { f.health.relistRequested(api::Kind::Pod); },
                               "relisting Pod"},
                      SkipCase{"stale",
                               [](Fixture& f) {
                                 f.health.onError(api::Kind::Pod, {"watch", 403, "403 Forbidden: pods is forbidden"});
                               },
                               "cache stale: pods (watch: 403 Forbidden: pods is forbidden)"}),
    [](const auto& info) { return info.param.name; });

struct MidRunCase {
  std::string name;
  std::function<void(Fixture&)> change;
  Refusal want;
};

class CycleRunnerGates : public ::testing::TestWithParam<MidRunCase> {};

// The world changes after the run began: the first eviction still goes, the second is refused with
// its own kind (not as an API error).
TEST_P(CycleRunnerGates, RefuseEvictionsOnceTheWorldChangesMidRun) {
  Fixture f(2);
  ActionGate gate;
  gate.action = [&] { GetParam().change(f); };
  CycleRunnerParts parts = f.parts(f.plan);
  parts.antiFlapping = &gate;
  CycleRunner runner(parts);
  RunReport r = runner.runOnce();
  EXPECT_TRUE(r.ran);
  EXPECT_EQ(r.evicted, 1u);
  EXPECT_EQ(r.refused, 1u);
  ASSERT_EQ(f.plan.refusals().size(), 1u);
  EXPECT_EQ(f.plan.refusals()[0].result.refusal, GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Table, CycleRunnerGates,
    ::testing::Values(MidRunCase{"shutdown", [](Fixture& f) { f.stop.cancel(); }, Refusal::Shutdown},
                      MidRunCase{"staleCache", [](Fixture& f) { f.health.relistRequested(api::Kind::Pod); },
                                 Refusal::StaleCache},
                      MidRunCase{"accessRefused",
                                 [](Fixture& f) {
                                   f.health.onError(api::Kind::Pod, {"list", 403, "403 Forbidden: pods is forbidden"});
                                 },
                                 Refusal::StaleCache},
                      MidRunCase{"notLeader", [](Fixture& f) { f.leadership.leader = false; }, Refusal::NotLeader}),
    [](const auto& info) { return info.param.name; });

TEST(CycleRunner, LateFailuresMoveFromEvictedToRefusedAndAreForgotten) {
  Fixture f(3);
  ScriptedApi api(f.clock);
  api.failing = {"payment-1"};
  evictor::RecentEvictions recent(f.clock);
  CycleRunnerParts parts = f.parts(api);
  parts.concurrency = 4;  // pipelined: the chain counts every submission as evicted
  parts.recent = &recent;
  CycleRunner runner(parts);
  RunReport r = runner.runOnce();
  EXPECT_EQ(r.evicted, 2u);
  EXPECT_EQ(r.refused, 1u);
  EXPECT_TRUE(recent.contains("uid-default-payment-0"));
  EXPECT_FALSE(recent.contains("uid-default-payment-1")) << "a later run may try it again";
  EXPECT_EQ(runner.hardFailures(), 0u) << "a conflict (the pod was replaced) is not a hard failure";
}

TEST(CycleRunner, ForbiddenEvictionsAreHardFailures) {
  Fixture f(2);
  ScriptedApi api(f.clock);
  api.failing = {"payment-0", "payment-1"};
  api.failure = framework::ApiFailure::Forbidden;
  CycleRunner runner(f.parts(api));
  RunReport r = runner.runOnce();
  EXPECT_EQ(r.evicted, 0u);
  EXPECT_EQ(r.refused, 2u);
  EXPECT_EQ(runner.hardFailures(), 2u);
}

TEST(CycleRunner, CooldownRefusalsAreLookedAtAgainWhenTheCooldownEnds) {
  Fixture f(2, "rs");  // two pods of one owner
  policy::AntiFlappingConfig config;
  config.ownerCooldownSeconds = 300;
  trigger::AntiFlapping antiFlapping(config, f.clock);
  CycleRunnerParts parts = f.parts(f.plan);
  parts.antiFlapping = &antiFlapping;
  parts.ownerCooldownSeconds = config.ownerCooldownSeconds;
  CycleRunner runner(parts);
  trigger::TriggeredRuns triggered(f.store, policy::TriggerConfig{}, runner, f.clock);
  runner.setCooldownRetries(&triggered);
  // One run's planned set is one decision: the cooldown does not cut it (upstream evicts it all).
  RunReport first = runner.runOnce();
  EXPECT_EQ(first.evicted, 2u);
  EXPECT_EQ(first.refused, 0u);
  EXPECT_FALSE(triggered.nextWakeup());
  // The next run finds the owner in cooldown (the fake store still holds both pods): refused, and
  // looked at again when the cooldown ends.
  f.clock->advanceSeconds(10);
  const Clock::TimePoint start = f.clock->now();
  RunReport r = runner.runOnce();
  EXPECT_EQ(r.evicted, 0u);
  EXPECT_EQ(r.refused, 2u);
  ASSERT_TRUE(triggered.nextWakeup());
  EXPECT_EQ(*triggered.nextWakeup(), start + seconds(300.1));
}

// A pod a scheduled freeze refused is looked at again right when the freeze ends (0.1 s after
// its window's exclusive end), and then evicted: the daemon wakes for it, not the next interval.
TEST(CycleRunner, AFreezeRefusalIsLookedAtAgainWhenTheFreezeEnds) {
  Fixture f;
  f.clock->advance(Clock::WallTime{} + std::chrono::seconds(api::parseTimestamp("2026-12-07T12:00:30Z").value()) -
                   f.clock->wallNow());
  policy::Budget freeze;
  freeze.name = "freeze";
  freeze.schedule = policy::CronSchedule::parse("0 12 * * *").value();
  freeze.durationSeconds = 60;
  evictor::BudgetGate budgets({freeze}, f.clock);
  CycleRunnerParts parts = f.parts(f.plan);
  parts.budgets = &budgets;
  CycleRunner runner(parts);
  trigger::TriggeredRuns triggered(f.store, policy::TriggerConfig{}, runner, f.clock);
  runner.setCooldownRetries(&triggered);
  const Clock::TimePoint start = f.clock->now();
  RunReport r = runner.runOnce();
  EXPECT_EQ(r.evicted, 0u);
  EXPECT_EQ(r.refused, 1u);
  ASSERT_EQ(f.plan.refusals().size(), 1u);
  EXPECT_EQ(f.plan.refusals()[0].result.refusal, Refusal::Budget);
  ASSERT_TRUE(triggered.nextWakeup());
  EXPECT_EQ(*triggered.nextWakeup(), start + seconds(30.1));
  f.clock->advanceSeconds(30.1);
  EXPECT_EQ(runner.runOnce().evicted, 1u);
}

// The process-wide rate limit ends the plugin's run at the first refusal, as the total limit does:
// one refusal, not one per candidate left (at S2 a LowNodeUtilization run met it ~3,000 times).
TEST(CycleRunner, TheRateLimitStopsThePluginAtItsFirstRefusal) {
  Fixture f(5);  // five violators, one owner each
  policy::AntiFlappingConfig config;
  config.maxEvictionsPerMinute = 2;
  trigger::AntiFlapping antiFlapping(config, f.clock);
  CycleRunnerParts parts = f.parts(f.plan);
  parts.antiFlapping = &antiFlapping;
  CycleRunner runner(parts);
  RunReport r = runner.runOnce();
  EXPECT_EQ(r.evicted, 2u);
  EXPECT_EQ(r.refused, 1u);
  ASSERT_EQ(f.plan.refusals().size(), 1u);
  EXPECT_TRUE(f.plan.refusals()[0].result.endsRun);
  EXPECT_EQ(f.plan.refusals()[0].result.by, "anti-flapping: rate-limit");
}

// The finish lines e2e tests and operators grep for.
class LogCapture {
 public:
  LogCapture() {
    log::setWriter([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogCapture() { log::setWriter(nullptr); }
  std::string find(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& l : lines_)
      if (l.find(text) != std::string::npos) return l;
    return "";
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST(CycleRunner, LogsTheFinishLines) {
  LogCapture logs;
  Fixture f(2);
  CycleRunner runner(f.parts(f.plan));
  runner.runPeriodic();
  EXPECT_THAT(logs.find("cycle finished"), HasSubstr("msg=\"cycle finished\" evicted=2 refused=0 nodes=2 pods=3 "));
  framework::CycleScope scope;
  scope.runBalance = false;
  scope.pods = podNames({});
  const Clock::TimePoint event = f.clock->now();
  f.clock->advanceSeconds(1.5);
  runner.runScoped(scope, event);
  EXPECT_THAT(logs.find("triggered run finished"),
              HasSubstr("msg=\"triggered run finished\" evicted=0 refused=0 candidates=0 balance=false seconds=0 "
                        "event_to_decision_seconds=1.5"));
}

TEST(CycleRunner, ATriggeredRunOnAStaleCacheIsSkipped) {
  LogCapture logs;
  Fixture f;
  CycleRunner runner(f.parts(f.plan));
  f.health.onError(api::Kind::Pod, {"watch", 403, "403 Forbidden: pods is forbidden"});
  framework::CycleScope scope;
  scope.runBalance = false;
  scope.plugins = {kAnti};
  scope.pods = podNames({"default/payment-0"});
  runner.runScoped(scope, f.clock->now());
  EXPECT_TRUE(f.plan.evictions().empty());
  EXPECT_TRUE(f.plan.refusals().empty()) << "not even looked at";
  EXPECT_EQ(logs.find("triggered run finished"), "");
  // Access back (the reflector relisted, then its watch was accepted): the next run goes.
  f.health.onList(api::Kind::Pod, 2, 0.1);
  f.health.onWatchOpened(api::Kind::Pod);
  runner.runScoped(scope, f.clock->now());
  EXPECT_EQ(f.plan.evictions().size(), 1u);
}

// A triggered run's snapshot is taken before it waits for its turn (a periodic cycle may hold the
// runner for tens of seconds): a relist meanwhile (a 410, or a refused watch that the reflector
// answers with a LIST, which requests nothing) means the snapshot is from before it. Nothing is
// decided on it; a fresh one decides.
TEST(CycleRunner, ARelistBetweenTheSnapshotAndTheRunLeavesTheSnapshotUnused) {
  for (bool requested : {true, false}) {
    SCOPED_TRACE(requested ? "410: relist requested, then listed" : "refused watch: listed only");
    Fixture f;
    CycleRunner runner(f.parts(f.plan));
    framework::CycleScope scope;
    scope.runBalance = false;
    scope.plugins = {kAnti};
    scope.pods = podNames({"default/payment-0"});
    f.health.onList(api::Kind::Pod, 2, 0.1);  // the first list: the cache synced
    trigger::RunSnapshot taken = runner.snapshot();
    if (requested) f.health.relistRequested(api::Kind::Pod);
    f.clock->advanceSeconds(20);  // the periodic cycle the run waited for
    f.health.onList(api::Kind::Pod, 2, 0.1);
    runner.runScoped(scope, f.clock->now(), taken);
    EXPECT_TRUE(f.plan.evictions().empty());
    EXPECT_TRUE(f.plan.refusals().empty()) << "not even looked at";
    runner.runScoped(scope, f.clock->now(), runner.snapshot());
    EXPECT_EQ(f.plan.evictions().size(), 1u);
  }
}

}  // namespace
}  // namespace kdesched::testing
