#include "pkg/kube/reflector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "pkg/kube/cache_health.h"
#include "test/unit/kube/reflector_fixture.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(ReflectorTest, ListsThenWatchesAndResumesFromTheLastVersion) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("b", "6")}, "10")));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("c", "11")), event("MODIFIED", podJson("a", "12", "n2")),
                                       event("DELETED", podJson("b", "13")), bookmark("20")},
                                      Scripted::End::Close));
  auto r = start();
  waitForWatches(2);
  r->stop();

  EXPECT_TRUE(r->synced());
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n2"}, {"default/c", "n1"}}));
  EXPECT_THAT(deleted(), ElementsAre("default/b"));
  // The first list asks for the current state in pages (a "0" list would come in one body); the
  // watch resumes from the list's version, and after a normal end from the bookmark's, without
  // listing again.
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500"));
  EXPECT_THAT(watchRvs(), ElementsAre("10", "20"));
  EXPECT_EQ(r->lastResourceVersion(), "20");
  EXPECT_THAT(transport_->watched()[0].target, HasSubstr("allowWatchBookmarks=true"));
  EXPECT_THAT(transport_->watched()[0].target, HasSubstr("timeoutSeconds=300"));
  EXPECT_THAT(observer_.lists, ElementsAre(2u));
  EXPECT_THAT(observer_.events, ElementsAre("ADDED", "MODIFIED", "DELETED", "BOOKMARK"));
  EXPECT_THAT(observer_.restarts, ElementsAre("closed"));
  EXPECT_TRUE(observer_.relists.empty());
  EXPECT_TRUE(clock_->sleeps().empty()) << "a normal end is not an error: no backoff";
}

TEST_F(ReflectorTest, ErrorEvent410RelistsAndVanishedObjectsBecomeDeletes) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("b", "6")}, "10")));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("c", "11")),
                                       event("ERROR", statusJson(410, "Expired", "too old resource version: 11 (90)"))},
                                      Scripted::End::Hang));
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("d", "95")}, "100")));
  auto r = start();
  waitForWatches(2);
  r->stop();

  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/d", "n1"}}));
  std::vector<std::string> gone = deleted();
  std::sort(gone.begin(), gone.end());
  EXPECT_THAT(gone, ElementsAre("default/b", "default/c")) << "missed deletions surface as deletes";
  // After a 410 the old version is useless: a consistent read ("" → no resourceVersion).
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500", "/api/v1/pods?limit=500"));
  EXPECT_THAT(watchRvs(), ElementsAre("10", "100"));
  EXPECT_THAT(observer_.relists, ElementsAre("gone"));
  EXPECT_THAT(observer_.lists, ElementsAre(2u, 2u));
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms)) << "a relist goes through the backoff too";
}

TEST_F(ReflectorTest, Http410OnWatchRelists) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(failedWatch(410, "Expired", "too old resource version: 10 (50)"));
  transport_->onSend(Scripted::json(podList({podJson("b", "55")}, "60")));
  auto r = start();
  waitForWatches(2);
  r->stop();
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/b", "n1"}}));
  EXPECT_THAT(deleted(), ElementsAre("default/a"));
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500", "/api/v1/pods?limit=500"));
  EXPECT_THAT(watchRvs(), ElementsAre("10", "60"));
  EXPECT_THAT(observer_.relists, ElementsAre("gone"));
}

TEST_F(ReflectorTest, MalformedLineRelistsWithoutApplyingAnythingOfIt) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  const std::string full = event("ADDED", podJson("half", "12"));
  transport_->onWatch(Scripted::watch(
      {event("ADDED", podJson("b", "11")), full.substr(0, full.size() - 20), event("ADDED", podJson("after", "13"))},
      Scripted::End::Hang));
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("b", "11"), podJson("x", "14")}, "15")));
  auto r = start();
  waitForWatches(2);
  r->stop();

  EXPECT_EQ(pods(),
            (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/b", "n1"}, {"default/x", "n1"}}));
  // Not a 410, but the relist still reads the current state in pages: a list at the last version
  // seen (11) would come from the watch cache in one body, however large.
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500", "/api/v1/pods?limit=500"));
  EXPECT_THAT(watchRvs(), ElementsAre("10", "15"));
  EXPECT_THAT(observer_.relists, ElementsAre("malformed"));
  ASSERT_EQ(observer_.errors.size(), 1u);
  EXPECT_THAT(observer_.errors[0], HasSubstr("malformed watch event"));
  EXPECT_THAT(observer_.errors[0], HasSubstr("malformed JSON"));
}

TEST_F(ReflectorTest, ListErrorsBackOffExponentially) {
  transport_->onSend(Scripted::json(statusJson(500, "InternalError", "etcdserver: request timed out"), 500));
  transport_->onSend(Scripted::json(statusJson(500, "InternalError", "etcdserver: request timed out"), 500));
  transport_->onSend(Scripted::failure("connection refused"));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  auto r = start();
  waitForWatches(1);
  r->stop();
  EXPECT_TRUE(r->synced());
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms, 1600ms, 3200ms));
  EXPECT_EQ(observer_.errors.size(), 3u);
  EXPECT_THAT(observer_.errors[0], HasSubstr("500 InternalError: etcdserver: request timed out"));
  EXPECT_THAT(observer_.errors[2], HasSubstr("connection refused"));
  EXPECT_THAT(observer_.lists, ElementsAre(1u));
}

// A standby that saw an outage is still backing off when it is granted the Lease: retryNow ends
// the wait at once (the clock never moves), and a retryNow while not waiting changes nothing.
TEST_F(ReflectorTest, RetryNowEndsABackoffWaitInProgress) {
  LogCapture logs(log::Level::Info);
  clock_->blockingSleeps();
  transport_->onSend(Scripted::json(statusJson(500, "InternalError", "etcdserver: request timed out"), 500));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  auto r = start();
  ASSERT_TRUE(waitUntil([&] { return clock_->sleeps().size() == 1; })) << "the failed LIST backs off";
  EXPECT_FALSE(r->synced());
  r->retryNow("the Lease was granted");
  waitForWatches(1);
  EXPECT_TRUE(r->synced());
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms));
  r->retryNow("not waiting");  // nothing to end, and nothing logged
  r->stop();
  EXPECT_EQ(transport_->watched().size(), 1u);
  std::vector<std::string> retries;
  for (const auto& line : logs.lines())
    if (line.find("reflector retries now") != std::string::npos) retries.push_back(line);
  ASSERT_EQ(retries.size(), 1u);
  EXPECT_THAT(retries[0], HasSubstr("the Lease was granted"));
}

TEST_F(ReflectorTest, WatchErrorsBackOffAndRewatchWithoutRelisting) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(failedWatch(429, "TooManyRequests", "too many requests"));
  transport_->onWatch(Scripted::failure("connection refused"));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("b", "11"))}, Scripted::End::Break));
  transport_->onWatch(Scripted::watch({}, Scripted::End::Close));  // a very short watch
  transport_->onWatch(Scripted::watch({event("ERROR", statusJson(500, "InternalError", "boom"))}, Scripted::End::Hang));
  auto r = start();
  waitForWatches(6);
  r->stop();
  EXPECT_EQ(transport_->sent().size(), 1u) << "only a 410 or a bad line justifies a relist";
  EXPECT_THAT(watchRvs(), ElementsAre("10", "10", "10", "11", "11", "11"));
  EXPECT_THAT(observer_.restarts, ElementsAre("open_failed", "open_failed", "broken", "very_short", "error_event"));
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms, 1600ms, 3200ms, 6400ms, 12800ms));
  EXPECT_EQ(pods().size(), 2u);
}

// client-go's ListAndWatch returns on a refused watch and starts over with a LIST: the cache is
// replaced with the current state (paged, consistent) once access is back, not patched from a
// version that may be long gone.
TEST_F(ReflectorTest, ARefusedWatchRelistsFromScratchOnceAllowed) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(failedWatch(403, "Forbidden", "pods is forbidden: cannot watch resource pods"));
  transport_->onSend(Scripted::json(statusJson(403, "Forbidden", "pods is forbidden: cannot list resource pods"), 403));
  transport_->onSend(Scripted::json(podList({podJson("b", "55")}, "60")));
  auto r = start();
  waitForWatches(2);
  // The second watch is asked for before the reflector hears it was accepted.
  ASSERT_TRUE(waitUntil([&] { return observer_.openedCount() >= 1; }));
  r->stop();
  EXPECT_THAT(observer_.failures, ElementsAre("watch 403", "list 403"));
  EXPECT_THAT(observer_.errors[0], HasSubstr("403 Forbidden: pods is forbidden: cannot watch resource pods"));
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500", "/api/v1/pods?limit=500", "/api/v1/pods?limit=500"))
      << "relisted from scratch (no resourceVersion, paged), not re-watched from rv 10";
  EXPECT_THAT(watchRvs(), ElementsAre("10", "60"));
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/b", "n1"}}));
  EXPECT_THAT(observer_.lists, ElementsAre(1u, 1u));
  EXPECT_TRUE(observer_.relists.empty()) << "not a lost-history relist (no kdesched_relists_total, no relist wait)";
  EXPECT_EQ(observer_.opened, 1) << "only the second watch was accepted";
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms, 1600ms));
}

TEST_F(ReflectorTest, OtherWatchFailuresAreReportedWithTheirVerbAndCode) {
  transport_->onSend(Scripted::json(podList({}, "10")));
  transport_->onWatch(failedWatch(500, "InternalError", "boom"));
  transport_->onWatch(Scripted::failure("connection refused"));
  auto r = start();
  waitForWatches(3);
  // The third watch is asked for before the reflector hears it was accepted.
  ASSERT_TRUE(waitUntil([&] { return observer_.openedCount() >= 1; }));
  r->stop();
  EXPECT_THAT(observer_.failures, ElementsAre("watch 500", "watch 0"));
  EXPECT_EQ(transport_->sent().size(), 1u) << "no relist: only a refusal or lost history asks for one";
  EXPECT_EQ(observer_.opened, 1);
}

// A missing RBAC rule fails every attempt the same way: warned once, then at most once a minute
// (the cache's health warns too, with the verb and a hint), not on every backoff.
TEST_F(ReflectorTest, ARepeatedFailureIsLoggedOnceAMinute) {
  std::vector<std::string> lines;
  std::mutex mu;
  log::setWriter([&](std::string_view line) {
    std::lock_guard<std::mutex> lock(mu);
    if (line.find("reflector list failed") != std::string_view::npos) lines.emplace_back(line);
  });
  // Backoffs 0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30 s: the 8th failure comes 80.4 s after the first.
  for (int i = 0; i < 8; ++i)
    transport_->onSend(Scripted::json(statusJson(403, "Forbidden", "pods is forbidden"), 403));
  transport_->onSend(Scripted::json(podList({}, "10")));
  auto r = start();
  waitForWatches(1);
  r->stop();
  log::setWriter(nullptr);
  EXPECT_EQ(observer_.failures.size(), 8u) << "every failure still reaches the observers";
  ASSERT_EQ(lines.size(), 2u) << "the first, and the first a minute later";
  EXPECT_THAT(lines[0], HasSubstr("level=warn"));
  EXPECT_THAT(lines[0], HasSubstr("resource=pods"));
  EXPECT_THAT(lines[0], HasSubstr("403 Forbidden: pods is forbidden"));
}

TEST_F(ReflectorTest, ListOnlyStopsAfterTheFirstCompleteList) {
  transport_->onSend(Scripted::json(statusJson(403, "Forbidden", "pods is forbidden"), 403));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  auto r = start(0.0, /*listOnly=*/true);
  ASSERT_TRUE(waitUntil([&] { return r->synced(); }));
  ASSERT_TRUE(returns([&] { r->stop(); }));
  EXPECT_TRUE(transport_->watched().empty()) << "a one-shot run decides on the list alone";
  EXPECT_THAT(observer_.failures, ElementsAre("list 403"));
  EXPECT_EQ(pods().size(), 1u);
}

TEST_F(ReflectorTest, WatchTimeoutIsRandomBetweenFiveAndTenMinutes) {
  transport_->onSend(Scripted::json(podList({}, "10")));
  auto r = start(0.999);
  waitForWatches(1);
  r->stop();
  const auto w = transport_->watched()[0];
  EXPECT_THAT(w.target, HasSubstr("timeoutSeconds=599"));
  EXPECT_GT(w.timeout, 599s);
  EXPECT_TRUE(r->synced()) << "an empty list is a complete list";
}

TEST_F(ReflectorTest, StopIsPromptWhileListingOrWatching) {
  // Unscripted requests hang like a stalled server until cancelled.
  auto listing = start();
  ASSERT_TRUE(waitUntil([&] { return transport_->sent().size() == 1; }));
  ASSERT_TRUE(returns([&] { listing->stop(); })) << "the hung LIST must be cut, not waited out";
  EXPECT_FALSE(listing->synced());

  transport_->onSend(Scripted::json(podList({}, "10")));
  auto watching = start();
  waitForWatches(1);
  ASSERT_TRUE(returns([&] {
    watching->stop();
    watching->stop();  // idempotent
  })) << "the open WATCH must be cut, not waited out";
  watching->start();  // a stopped reflector stays stopped
  EXPECT_EQ(transport_->watched().size(), 1u);
}

TEST(Backoff, GrowsCapsAndResetsAfterAHealthyPeriod) {
  auto clock = std::make_shared<FakeClock>();
  Backoff b(BackoffOptions{}, clock, [] { return 0.0; });
  std::vector<Clock::Duration> waits;
  for (int i = 0; i < 8; ++i) {
    waits.push_back(b.next());
    clock->advance(waits.back());
  }
  EXPECT_THAT(waits, ElementsAre(800ms, 1600ms, 3200ms, 6400ms, 12800ms, 25600ms, 30s, 30s));
  clock->advance(89s);  // 119 s after the previous backoff began
  EXPECT_EQ(b.next(), 30s) << "still failing within two minutes: keep waiting long";
  clock->advance(2min + 1ms);
  EXPECT_EQ(b.next(), 800ms) << "two healthy minutes: start over";

  // Jitter adds up to 100% on top of the base, as client-go's wait.Jitter does.
  Backoff jittered(BackoffOptions{}, clock, [] { return 0.5; });
  EXPECT_EQ(jittered.next(), 1200ms);
  EXPECT_EQ(jittered.next(), 2400ms);
}

// One pod the API server holds that kdesched cannot decode failed the whole LIST page, so the cache
// never synced. It is left out and reported (the cache's health makes the resource stale), and a
// readable version of it or its deletion clears it.
std::string unreadablePod(const std::string& name, const std::string& rv) {
  std::string pod = podJson(name, rv);
  pod.replace(pod.find("100m"), 4, "12x");
  return pod;
}

TEST_F(ReflectorTest, AnUndecodablePodIsLeftOutOfTheListAndReported) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), unreadablePod("b", "6"), podJson("c", "7")}, "10")));
  transport_->onWatch(Scripted::watch({event("MODIFIED", podJson("b", "11"))}, Scripted::End::Hang));
  auto r = start();
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return pods().count("default/b") == 1; }));
  r->stop();

  EXPECT_TRUE(r->synced());
  EXPECT_EQ(pods(),
            (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/b", "n1"}, {"default/c", "n1"}}));
  ASSERT_EQ(observer_.undecodable.size(), 2u);
  EXPECT_THAT(observer_.undecodable[0],
              HasSubstr("1 default/b: spec.containers[0].resources.requests.cpu: invalid quantity \"12x\""));
  EXPECT_EQ(observer_.undecodable[1], "0") << "its readable version clears it";
  EXPECT_TRUE(observer_.relists.empty()) << "the rest of the list was fine: no relist";
}

TEST_F(ReflectorTest, AnUndecodableWatchEventRemovesTheObjectsLastState) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("b", "6")}, "10")));
  transport_->onWatch(Scripted::watch({event("MODIFIED", unreadablePod("b", "11")), event("ADDED", podJson("c", "12")),
                                       event("DELETED", unreadablePod("b", "13"))},
                                      Scripted::End::Hang));
  auto r = start();
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "13"; }));
  r->stop();

  // b's last readable state would have been decided on as if it were current.
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/c", "n1"}}));
  EXPECT_THAT(deleted(), ElementsAre("default/b"));
  EXPECT_THAT(observer_.undecodable, ElementsAre(HasSubstr("1 default/b: spec.containers[0]"), "0"));
  EXPECT_THAT(observer_.events, ElementsAre("MODIFIED", "ADDED", "DELETED"));
  EXPECT_TRUE(observer_.relists.empty());
}

TEST_F(ReflectorTest, AnUndecodableWatchEventWithoutANameRelists) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(
      Scripted::watch({event("ADDED", R"({"metadata":{"namespace":"default","resourceVersion":"11"},"spec":{}})")},
                      Scripted::End::Hang));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "12")));
  auto r = start();
  waitForWatches(2);
  r->stop();
  EXPECT_THAT(observer_.relists, ElementsAre("malformed"));
  ASSERT_EQ(observer_.errors.size(), 1u);
  EXPECT_THAT(observer_.errors[0], HasSubstr("undecodable watch event: metadata.name: missing"));
}

// A pod requesting 10P of memory (10^19 milli-units, beyond int64) is one the API server accepts.
// It once failed to decode, so the pods resource was stale for as long as it existed and no cycle
// ran anywhere: anyone who may create a pod could switch kdesched off. Its amount saturates now.
std::string hogPod(const std::string& name, const std::string& rv) {
  std::string pod = podJson(name, rv);
  pod.replace(pod.find(R"("cpu":"100m")"), 12, R"("cpu":"100m","memory":"10P")");
  return pod;
}

TEST_F(ReflectorTest, APodBeyondInt64MilliIsKeptSaturatedAndNeverMakesPodsStale) {
  LogCapture logs(log::Level::Info);
  CacheHealth health(clock_);
  ReflectorObservers both({&observer_, &health});
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), hogPod("b", "6")}, "10")));
  transport_->onWatch(
      Scripted::watch({event("MODIFIED", hogPod("b", "11")), event("ADDED", hogPod("c", "12"))}, Scripted::End::Hang));
  auto r = std::make_unique<Reflector>(*client_, kPods, store_, options(), &both);
  r->start();
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "12"; }));
  r->stop();

  EXPECT_EQ(pods(),
            (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/b", "n1"}, {"default/c", "n1"}}));
  auto snapshot = store_.snapshot();
  const auto& all = snapshot->pods();
  auto b = std::find_if(all.begin(), all.end(), [](const api::Pod* p) { return p->name == "b"; });
  ASSERT_NE(b, all.end());
  EXPECT_EQ((*b)->requests.get(api::kMemory()), api::kSaturatedMilli);
  EXPECT_TRUE(observer_.undecodable.empty()) << "nothing is undecodable";
  EXPECT_EQ(health.stale(), "") << "a saturated pod never makes the pods resource stale";
  EXPECT_TRUE(observer_.relists.empty());
  // Named once per pod (b listed, then modified; c added), at warning level, with the field.
  std::size_t named = 0;
  for (const std::string& line : logs.lines()) {
    if (line.find("saturated") == std::string::npos) continue;
    ++named;
    EXPECT_THAT(line, HasSubstr("requests memory"));
  }
  EXPECT_EQ(named, 2u) << "once for b (not again on its MODIFIED event), once for c";
}

}  // namespace
}  // namespace kdesched::kube::testing
