// A watch that carries nothing, not even the API server's minutely bookmark, for the silence bound
// is on a dead connection: cut, reported and opened again from the last resourceVersion
// (reflector.h, stall_watchdog.h).
#include "pkg/kube/cache_health.h"
#include "test/unit/kube/reflector_fixture.h"

namespace kdesched::kube::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class SilentWatchTest : public ReflectorTest {
 protected:
  ReflectorOptions silenceBound(bool watchList = false) {
    clock_->blockingSleeps();
    ReflectorOptions o = options();
    o.silentWatch = 75s;
    o.watchList = watchList;
    return o;
  }
  // The watchdog of the open watch sleeps on the clock; nothing else does.
  void waitForTheWatchdog(std::size_t watch) {
    ASSERT_TRUE(waitUntil([&] { return transport_->drained(watch) && clock_->sleepers() == 1; }));
  }
};

TEST_F(SilentWatchTest, ASilentWatchIsCutAndWatchedAgainFromTheLastVersionAtOnce) {
  LogCapture logs(log::Level::Info);
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("b", "11"))}, Scripted::End::Hang));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("c", "14"))}, Scripted::End::Hang));
  auto r = startWith(silenceBound());
  waitForWatches(1);
  waitForTheWatchdog(0);
  clock_->advance(74s);
  transport_->feed(0, {bookmark("13")});  // a bookmark is a word from the server too
  waitForTheWatchdog(0);
  const std::size_t sleeps = clock_->sleeps().size();
  clock_->advance(74s);
  // The watchdog wakes at the old deadline and waits out the rest of the bound from the bookmark
  // (one second); cut instead, the next watch's watchdog would wait a whole bound.
  ASSERT_TRUE(waitUntil([&] { return clock_->sleeps().size() > sleeps && clock_->sleepers() == 1; }));
  EXPECT_EQ(clock_->sleeps().back(), 1s);
  EXPECT_EQ(transport_->watched().size(), 1u) << "74 s after the bookmark: still within the bound";
  clock_->advance(1s);
  waitForWatches(2);
  ASSERT_TRUE(waitUntil([&] { return pods().size() == 3; }));
  r->stop();
  EXPECT_THAT(watchRvs(), ElementsAre("10", "13")) << "resumed where the silent watch left off";
  EXPECT_EQ(transport_->sent().size(), 1u) << "no relist: the server still has that version";
  EXPECT_THAT(observer_.restarts, ElementsAre("silent"));
  EXPECT_THAT(observer_.errors, ElementsAre("silent watch: no event and no bookmark for 75s"));
  EXPECT_THAT(observer_.failures, ElementsAre("watch 0"));
  EXPECT_THAT(clock_->sleeps(), Contains(75s));
  EXPECT_THAT(clock_->sleeps(), Not(Contains(800ms))) << "watched again at once, without a backoff";
  EXPECT_THAT(logs.lines(), Contains(HasSubstr("level=warn msg=\"reflector watch restart\" resource=pods "
                                               "reason=silent rv=13")));
}

// A watch-list's stream goes on as the watch: once its initial events are in, the watch's bound.
TEST_F(SilentWatchTest, TheStreamAfterAWatchListsInitialEventsHasTheSameBound) {
  ReflectorOptions o = silenceBound(true);
  o.watchListQuiet = 30s;
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("a", "5")), initialEventsEnd("10")}, Scripted::End::Hang));
  transport_->onWatch(Scripted::watch({}, Scripted::End::Hang));
  auto r = startWith(o);
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return r->synced(); }));
  waitForTheWatchdog(0);
  clock_->advance(74s);
  EXPECT_EQ(transport_->watched().size(), 1u) << "past the watch-list's 30 s: the watch's 75 s now";
  clock_->advance(1s);
  waitForWatches(2);
  r->stop();
  EXPECT_THAT(observer_.restarts, ElementsAre("silent"));
  EXPECT_THAT(watchRvs(), ElementsAre("", "10"));
}

// Opening the watch is bounded too: an answer that never comes is the same silence.
TEST_F(SilentWatchTest, AWatchThatNeverAnswersIsCutAtTheBound) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(Scripted::silence());
  transport_->onWatch(Scripted::watch({}, Scripted::End::Hang));
  auto r = startWith(silenceBound());
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return clock_->sleepers() == 1; }));
  clock_->advance(75s);
  waitForWatches(2);
  r->stop();
  EXPECT_THAT(observer_.restarts, ElementsAre("silent"));
  EXPECT_THAT(watchRvs(), ElementsAre("10", "10"));
}

// The failure began when the silence did: with a bound past --cache-stale-after the resource is
// stale at once, and it is fresh again when a watch is accepted.
TEST(SilentWatchHealth, TheFailureCountsFromTheLastWord) {
  auto clock = std::make_shared<FakeClock>();
  CacheHealth health(clock, 120s);
  ReflectorFailure silent{"watch", 0, "silent watch: no event and no bookmark for 75s"};
  silent.silentFor = 75s;
  health.onError(api::Kind::Pod, silent);
  EXPECT_EQ(health.stale(), "");
  clock->advance(44s);
  health.onError(api::Kind::Pod, {"watch", 0, "connection refused"});
  EXPECT_EQ(health.stale(), "") << "119 s after the last word";
  clock->advance(1s);
  EXPECT_THAT(health.stale(), HasSubstr("pods")) << "120 s after the last word, 45 s after it was noticed";
  health.onWatchOpened(api::Kind::Pod);
  EXPECT_EQ(health.stale(), "");
}

}  // namespace
}  // namespace kdesched::kube::testing
