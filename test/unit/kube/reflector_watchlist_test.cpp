// The reflector's sync by watch-list: the state streamed as ADDED events, the store replaced at
// the bookmark that ends them, the same stream going on as the watch, and the paged LIST as the
// fallback (reflector.h).
#include "test/unit/kube/reflector_fixture.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr const char* kWatchListQuery =
    "/api/v1/pods?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan";

// kube-apiserver 1.36 with --feature-gates=WatchList=false.
Scripted gateOff() {
  return failedWatch(422, "Invalid",
                     "ListOptions.meta.k8s.io \\\"\\\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is "
                     "forbidden for watch unless the WatchList feature gate is enabled");
}

class WatchListTest : public ReflectorTest {
 protected:
  std::unique_ptr<Reflector> stream(bool listOnly = false) {
    ReflectorOptions o = options();
    o.watchList = true;
    o.listOnly = listOnly;
    return startWith(o);
  }
  bool isWatchList(std::size_t n) { return transport_->watched()[n].target.rfind(kWatchListQuery, 0) == 0; }
};

TEST_F(WatchListTest, TheStoreIsReplacedOnceAtTheBookmarkAndTheStreamGoesOnAsTheWatch) {
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("a", "5")), event("ADDED", podJson("b", "7"))}, Scripted::End::Hang));
  auto r = stream();
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return transport_->drained(0); }));
  // Both objects are read, neither is in the store: a cycle must not see half a state.
  EXPECT_FALSE(r->synced());
  EXPECT_TRUE(pods().empty());
  EXPECT_TRUE(observer_.lists.empty());

  transport_->feed(0, {initialEventsEnd("9"), event("MODIFIED", podJson("a", "10", "n2"))});
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "10"; }));
  r->stop();

  EXPECT_TRUE(r->synced());
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n2"}, {"default/b", "n1"}}));
  EXPECT_THAT(changes(), ElementsAre("added default/a", "added default/b", "modified default/a"));
  EXPECT_TRUE(transport_->sent().empty()) << "no LIST";
  ASSERT_EQ(transport_->watched().size(), 1u) << "the same stream goes on as the watch";
  // No resourceVersion at all, as client-go asks for the newest state.
  EXPECT_EQ(transport_->watched()[0].target, std::string(kWatchListQuery) + "&timeoutSeconds=300");
  EXPECT_THAT(observer_.lists, ElementsAre(2u));
  EXPECT_EQ(observer_.opened, 1);
  EXPECT_THAT(observer_.events, ElementsAre("MODIFIED")) << "the initial events are the list, not changes";
}

TEST_F(WatchListTest, ARelistAfter410StreamsAgainAndObjectsGoneMeanwhileAreDeletedAtTheBookmark) {
  transport_->onWatch(Scripted::watch(
      {event("ADDED", podJson("a", "5")), event("ADDED", podJson("b", "6")), event("ADDED", podJson("c", "7")),
       initialEventsEnd("10"), event("ERROR", statusJson(410, "Expired", "too old resource version: 10 (90)"))},
      Scripted::End::Hang));
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("a", "5")), event("ADDED", podJson("d", "95"))}, Scripted::End::Hang));
  auto r = stream();
  waitForWatches(2);
  ASSERT_TRUE(waitUntil([&] { return transport_->drained(1); }));
  EXPECT_EQ(pods().size(), 3u) << "b and c stay until the new state is complete";
  EXPECT_TRUE(deleted().empty());

  transport_->feed(1, {initialEventsEnd("100")});
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "100"; }));
  r->stop();
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/d", "n1"}}));
  std::vector<std::string> gone = deleted();
  std::sort(gone.begin(), gone.end());
  EXPECT_THAT(gone, ElementsAre("default/b", "default/c"));
  EXPECT_TRUE(transport_->sent().empty()) << "the relist streams too";
  EXPECT_TRUE(isWatchList(1));
  EXPECT_THAT(watchRvs(), ElementsAre("", "")) << "after a 410 the newest state, not the lost version";
  EXPECT_THAT(observer_.relists, ElementsAre("gone"));
  EXPECT_THAT(observer_.lists, ElementsAre(3u, 2u));
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms)) << "a relist goes through the backoff";
}

TEST_F(WatchListTest, AStreamBrokenBeforeItsBookmarkLeavesTheStoreAsItWasAndIsRetried) {
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "5")), event("ADDED", podJson("b", "6")),
                                       initialEventsEnd("10"), event("ERROR", statusJson(410, "Expired", "gone"))},
                                      Scripted::End::Hang));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "5"))}, Scripted::End::Break));
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "5"))}, Scripted::End::Close));
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("a", "5")), initialEventsEnd("20")}, Scripted::End::Hang));
  auto r = stream();
  waitForWatches(4);
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "20"; }));
  r->stop();

  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n1"}}));
  // b left the store once, at the only complete state after the first: not at either broken one.
  EXPECT_THAT(changes(), ElementsAre("added default/a", "added default/b", "modified default/a", "deleted default/b"));
  EXPECT_THAT(observer_.failures, ElementsAre("watch 0", "watch 0"));
  ASSERT_EQ(observer_.errors.size(), 2u);
  EXPECT_THAT(observer_.errors[0], HasSubstr("watch-list stream broken: connection reset by peer"));
  EXPECT_THAT(observer_.errors[1], HasSubstr("watch-list closed after 1 events, before its closing bookmark"));
  EXPECT_THAT(observer_.lists, ElementsAre(2u, 1u));
  EXPECT_TRUE(transport_->sent().empty());
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms, 1600ms, 3200ms));
}

// Three failed streams in a row: one paged LIST ("making progress is better than deadlocking", as
// client-go says), then a watch-list again at the next relist.
TEST_F(WatchListTest, RepeatedlyFailingStreamsGiveWayToOneList) {
  for (int i = 0; i < 3; ++i) transport_->onWatch(Scripted::failure("connection refused"));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(failedWatch(410, "Expired", "too old resource version: 10 (50)"));
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("b", "55")), initialEventsEnd("60")}, Scripted::End::Hang));
  auto r = stream();
  waitForWatches(5);
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "60"; }));
  r->stop();
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500"));
  EXPECT_FALSE(isWatchList(3)) << "the watch after the LIST is a plain one";
  EXPECT_TRUE(isWatchList(4));
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/b", "n1"}}));
  EXPECT_FALSE(client_->watchListRefused());
}

TEST_F(WatchListTest, AServerWithTheGateOffIsListedInPagesForTheRestOfTheProcess) {
  LogCapture logs(log::Level::Info);
  transport_->onWatch(gateOff());
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  transport_->onWatch(failedWatch(410, "Expired", "too old resource version: 10 (50)"));
  transport_->onSend(Scripted::json(podList({podJson("b", "55")}, "60")));
  auto r = stream();
  waitForWatches(3);
  ASSERT_TRUE(waitUntil([&] { return r->lastResourceVersion() == "60"; }));
  r->stop();

  EXPECT_TRUE(r->synced());
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/b", "n1"}}));
  EXPECT_TRUE(isWatchList(0));
  EXPECT_FALSE(isWatchList(1));
  EXPECT_FALSE(isWatchList(2)) << "the relist after the 410 lists too";
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500", "/api/v1/pods?limit=500"));
  EXPECT_THAT(watchRvs(), ElementsAre("", "10", "60"));
  EXPECT_TRUE(observer_.failures.empty()) << "a refusal of the parameters is not a failure of the cache";
  EXPECT_THAT(clock_->sleeps(), ElementsAre(800ms)) << "the fallback LIST goes at once; the 410 backs off";
  EXPECT_TRUE(client_->watchListRefused());

  // Another resource of the same process goes straight to the LIST: the gate is server-wide.
  transport_->onSend(Scripted::json(R"({"kind":"NodeList","metadata":{"resourceVersion":"70"},"items":[]})"));
  ReflectorOptions o = options();
  o.watchList = true;
  auto nodes = startWith(o, kNodes);
  waitForWatches(4);
  nodes->stop();
  EXPECT_EQ(
      transport_->watched()[3].target.rfind("/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=70", 0),
      0u);
  std::vector<std::string> said;
  for (const std::string& l : logs.lines())
    if (l.find("does not serve watch-lists") != std::string::npos) said.push_back(l);
  ASSERT_EQ(said.size(), 1u) << "said once, at info";
  EXPECT_THAT(said[0], HasSubstr("level=info"));
  EXPECT_THAT(said[0], HasSubstr("sendInitialEvents is forbidden for watch unless the WatchList feature gate"));
}

// A change before the closing bookmark: the server streamed changes without the initial state's
// end (it did not take sendInitialEvents), so that bookmark may never come.
TEST_F(WatchListTest, AChangeBeforeTheClosingBookmarkMeansNoWatchListSupport) {
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("a", "5")), event("MODIFIED", podJson("a", "6"))}, Scripted::End::Hang));
  transport_->onSend(Scripted::json(podList({podJson("a", "6")}, "10")));
  auto r = stream();
  waitForWatches(2);
  r->stop();
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500"));
  EXPECT_TRUE(client_->watchListRefused());
  EXPECT_THAT(changes(), ElementsAre("added default/a")) << "nothing of the refused stream reached the store";
}

// A bookmark that never comes: cut after watchListQuiet without an event, one LIST instead (a
// pause under load is not a server without watch-lists).
TEST_F(WatchListTest, NoClosingBookmarkWithinTheQuietBoundFallsBackToTheList) {
  LogCapture logs(log::Level::Info);
  clock_->blockingSleeps();
  ReflectorOptions o = options();
  o.watchList = true;
  o.watchListQuiet = 30s;
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "5"))}, Scripted::End::Hang));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  auto r = startWith(o);
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return transport_->drained(0) && !clock_->sleeps().empty(); }));
  clock_->advance(29s);
  EXPECT_FALSE(r->synced());
  EXPECT_TRUE(transport_->sent().empty()) << "still waiting within the bound";
  clock_->advance(1s);
  waitForWatches(2);
  r->stop();
  EXPECT_TRUE(r->synced());
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500"));
  EXPECT_FALSE(isWatchList(1));
  EXPECT_FALSE(client_->watchListRefused()) << "one silence lists once";
  EXPECT_THAT(logs.lines(),
              Contains(HasSubstr("level=warn msg=\"reflector watch-list fell silent before its closing bookmark, "
                                 "listing once instead\" resource=pods reason=\"no bookmark ending the initial "
                                 "events within 30s of the last event (1 events)\" in_a_row=1")));
}

// Three silences in a row, with a relist between them: the server does not serve watch-lists.
TEST_F(WatchListTest, ThreeSilentWatchListsInARowMeanNoWatchListSupport) {
  clock_->blockingSleeps();
  ReflectorOptions o = options();
  o.watchList = true;
  o.watchListQuiet = 30s;
  for (int i = 0; i < 3; ++i) {
    transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "5"))}, Scripted::End::Hang));
    transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
    transport_->onWatch(failedWatch(410, "Expired", "too old resource version: 10 (50)"));
  }
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "20")));
  transport_->onWatch(Scripted::watch({}, Scripted::End::Hang));
  auto r = startWith(o);
  for (std::size_t i = 0; i < 3; ++i) {
    // Watch 2i: a watch-list that falls silent; LIST; watch 2i+1 gets 410 and backs off.
    waitForWatches(2 * i + 1);
    ASSERT_TRUE(isWatchList(2 * i)) << i;
    EXPECT_FALSE(client_->watchListRefused()) << i;
    ASSERT_TRUE(waitUntil([&] { return transport_->drained(2 * i) && clock_->sleepers() == 1; })) << i;
    clock_->advance(30s);
    waitForWatches(2 * i + 2);
    ASSERT_TRUE(waitUntil([&] { return clock_->sleepers() == 1; })) << i;
    clock_->advance(10s);
  }
  waitForWatches(7);
  r->stop();
  EXPECT_TRUE(client_->watchListRefused());
  EXPECT_THAT(sentTargets(), ElementsAre("/api/v1/pods?limit=500", "/api/v1/pods?limit=500", "/api/v1/pods?limit=500",
                                         "/api/v1/pods?limit=500"))
      << "a LIST after each silence, a fourth after the last 410: no watch-list any more";
  EXPECT_FALSE(isWatchList(6));
}

// A plain bookmark among the initial events is where the server is, not their end.
TEST_F(WatchListTest, APlainBookmarkBeforeTheClosingOneIsSkipped) {
  transport_->onWatch(Scripted::watch(
      {event("ADDED", podJson("a", "5")), bookmark("7"), event("ADDED", podJson("b", "8")), initialEventsEnd("9")},
      Scripted::End::Hang));
  auto r = stream();
  ASSERT_TRUE(waitUntil([&] { return r->synced(); }));
  r->stop();
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n1"}, {"default/b", "n1"}}));
  EXPECT_EQ(r->lastResourceVersion(), "9");
  EXPECT_TRUE(transport_->sent().empty()) << "no LIST";
  EXPECT_FALSE(client_->watchListRefused());
}

// The watchdog also cuts a watch-list that is not even answered (a request time limit longer than
// its bound): that is a failure to retry, not the reflector's stop.
TEST_F(WatchListTest, AWatchListNotAnsweredWithinTheBoundIsRetried) {
  clock_->blockingSleeps();
  ReflectorOptions o = options();
  o.watchList = true;
  o.watchListQuiet = 30s;
  transport_->onWatch(Scripted::silence());
  transport_->onWatch(Scripted::watch({initialEventsEnd("5")}, Scripted::End::Hang));
  auto r = startWith(o);
  waitForWatches(1);
  ASSERT_TRUE(waitUntil([&] { return clock_->sleeps().size() == 1; }));  // the watchdog's
  clock_->advance(30s);
  ASSERT_TRUE(waitUntil([&] { return clock_->sleeps().size() == 2; }));  // the backoff
  clock_->advance(1s);
  ASSERT_TRUE(waitUntil([&] { return r->synced(); }));
  r->stop();
  EXPECT_THAT(observer_.errors, ElementsAre(HasSubstr("no answer to the watch-list within 30s")));
  EXPECT_FALSE(client_->watchListRefused());
}

// A one-shot run needs only "list": a refused watch-list is no refusal of the cache.
TEST_F(WatchListTest, ARefusedWatchListFallsBackToTheListWithoutReportingTheWatch) {
  transport_->onWatch(failedWatch(403, "Forbidden", "pods is forbidden: cannot watch resource pods"));
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10")));
  auto r = stream(/*listOnly=*/true);
  ASSERT_TRUE(waitUntil([&] { return r->synced(); }));
  ASSERT_TRUE(returns([&] { r->stop(); }));
  EXPECT_TRUE(observer_.failures.empty()) << "the LIST answered for the cache";
  EXPECT_EQ(transport_->watched().size(), 1u);
  EXPECT_EQ(pods().size(), 1u);
  EXPECT_FALSE(client_->watchListRefused()) << "a 403 says nothing about the server: stream again next time";
}

TEST_F(WatchListTest, AOneShotRunTakesTheInitialStateAndLeavesTheStream) {
  transport_->onWatch(
      Scripted::watch({event("ADDED", podJson("a", "5")), initialEventsEnd("10"), event("DELETED", podJson("a", "11"))},
                      Scripted::End::Hang));
  auto r = stream(/*listOnly=*/true);
  ASSERT_TRUE(waitUntil([&] { return transport_->closed(0); })) << "it leaves the stream once it has the state";
  EXPECT_TRUE(r->synced());
  ASSERT_TRUE(returns([&] { r->stop(); }));
  EXPECT_EQ(pods().size(), 1u) << "the change after the bookmark is not the one-shot run's business";
  EXPECT_EQ(r->lastResourceVersion(), "10");
  EXPECT_EQ(transport_->watched().size(), 1u);
}

TEST_F(WatchListTest, AnUndecodablePodInTheStreamIsReportedAsInAList) {
  std::string bad = podJson("b", "6");
  bad.replace(bad.find("100m"), 4, "12x");
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "5")), event("ADDED", bad), initialEventsEnd("10")},
                                      Scripted::End::Hang));
  auto r = stream();
  ASSERT_TRUE(waitUntil([&] { return r->synced(); }));
  r->stop();
  EXPECT_EQ(pods(), (std::map<std::string, std::string>{{"default/a", "n1"}}));
  ASSERT_EQ(observer_.undecodable.size(), 1u);
  EXPECT_THAT(observer_.undecodable[0], HasSubstr("1 default/b: spec.containers[0].resources.requests.cpu"));
  EXPECT_THAT(observer_.lists, ElementsAre(1u));
}

}  // namespace
}  // namespace kdesched::kube::testing
