#include "pkg/kube/cache_health.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <mutex>

#include "pkg/base/log.h"
#include "test/unit/testing/fake_clock.h"

namespace kdesched::kube {
namespace {

using ::testing::HasSubstr;

TEST(CacheHealth, TracksRelistsPerKindUntilListed) {
  CacheHealth h;
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 0u);
  h.relistRequested(api::Kind::Pod);
  h.relistRequested(api::Kind::PodDisruptionBudget);
  EXPECT_THAT(h.relisting(), HasSubstr("Pod"));
  EXPECT_THAT(h.relisting(), HasSubstr("PodDisruptionBudget"));
  EXPECT_EQ(h.relistRequests(), 2u);
  h.listed(api::Kind::PodDisruptionBudget);
  EXPECT_EQ(h.relisting(), "Pod");
  h.listed(api::Kind::Pod);
  EXPECT_EQ(h.relisting(), "");
  // A first list (no relist requested) changes nothing.
  h.listed(api::Kind::Node);
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 2u);
}

TEST(CacheHealth, IsTheReflectorsObserver) {
  CacheHealth h;
  ReflectorObserver& o = h;
  o.onRelist(api::Kind::Node, "gone");
  EXPECT_EQ(h.relisting(), "Node");
  EXPECT_EQ(h.relistRequests(), 1u);
  o.onList(api::Kind::Node, 3, 0.1);
  EXPECT_EQ(h.relisting(), "");
  EXPECT_EQ(h.relistRequests(), 1u) << "Node's first list: no snapshot can predate it";
  o.onList(api::Kind::Node, 3, 0.1);
  EXPECT_EQ(h.relistRequests(), 2u) << "the store replaced again: a generation of its own";
}

TEST(CacheHealth, FirstListsStartNoGeneration) {
  // The reflector marks itself synced, then tells its observers: a one-shot run's only cycle may
  // snapshot in between. The first lists must leave that snapshot's generation standing.
  CacheHealth h;
  ReflectorObserver& o = h;
  for (api::Kind k : {api::Kind::Node, api::Kind::Pod, api::Kind::PodDisruptionBudget}) o.onList(k, 1, 0.1);
  const std::uint64_t atSnapshot = h.relistRequests();
  o.onList(api::Kind::Namespace, 4, 0.1);
  EXPECT_EQ(h.relistRequests(), atSnapshot);
  o.onList(api::Kind::Pod, 2, 0.1);
  EXPECT_NE(h.relistRequests(), atSnapshot) << "a relist of pods is a new generation";
}

}  // namespace
}  // namespace kdesched::kube

namespace kdesched::kube {
namespace {

using namespace std::chrono_literals;
using kdesched::testing::FakeClock;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kWatchForbidden =
    "403 Forbidden: pods is forbidden: User \"system:serviceaccount:kube-system:kdesched\" cannot watch resource "
    "\"pods\" in API group \"\" at the cluster scope";
const std::string kListForbidden = "403 Forbidden: pods is forbidden: cannot list resource \"pods\"";

class LogLines {
 public:
  LogLines() {
    log::setWriter([this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    });
  }
  ~LogLines() { log::setWriter(nullptr); }
  // The lines with `msg="<msg>"`.
  std::vector<std::string> with(const std::string& msg) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& l : lines_)
      if (l.find("msg=\"" + msg + "\"") != std::string::npos) out.push_back(l);
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

struct StaleFixture {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  CacheHealth h{clock, 120s};
  ReflectorObserver& o = h;
  std::vector<std::string> stale() {
    std::vector<std::string> out;
    for (const StaleResource& r : h.staleResources()) out.push_back(r.resource + " " + r.verb);
    return out;
  }
};

// 403 on the watch → stale at once; the reflector relists (refused too, then allowed) and watches
// again: fresh only once the refused verb, watch, works again.
TEST(CacheHealthStale, ARefusedVerbIsStaleUntilThatVerbWorksAgain) {
  StaleFixture f;
  f.o.onList(api::Kind::Pod, 3, 0.1);
  f.o.onWatchOpened(api::Kind::Pod);
  EXPECT_THAT(f.stale(), IsEmpty());
  EXPECT_EQ(f.h.stale(), "");

  f.o.onError(api::Kind::Pod, {"watch", 403, kWatchForbidden});
  EXPECT_THAT(f.stale(), ElementsAre("pods watch"));
  EXPECT_EQ(f.h.stale(), "pods (watch: " + kWatchForbidden + ")");
  ASSERT_EQ(f.h.staleResources().size(), 1u);
  EXPECT_TRUE(f.h.staleResources()[0].denied);

  f.o.onError(api::Kind::Pod, {"list", 403, kListForbidden});
  f.clock->advance(30s);
  EXPECT_THAT(f.stale(), ElementsAre("pods watch")) << "the first refusal is the one reported";
  EXPECT_DOUBLE_EQ(f.h.staleResources()[0].seconds, 30);

  f.o.onList(api::Kind::Pod, 3, 0.1);
  EXPECT_THAT(f.stale(), ElementsAre("pods watch")) << "listing again does not make a refused watch work";
  f.o.onWatchOpened(api::Kind::Pod);
  EXPECT_THAT(f.stale(), IsEmpty());
  // A refused list alone clears with a list.
  f.o.onError(api::Kind::Node, {"list", 401, "401 Unauthorized"});
  EXPECT_THAT(f.stale(), ElementsAre("nodes list"));
  f.o.onList(api::Kind::Node, 1, 0.1);
  EXPECT_THAT(f.stale(), IsEmpty());
}

// Failures that are not refusals: stale only once they have lasted the bound without a LIST or an
// accepted WATCH in between.
TEST(CacheHealthStale, FailuresPastTheBoundAreStale) {
  struct Case {
    std::string name;
    std::function<void(StaleFixture&)> between;  // after the first failure, at 60 s
    bool staleAt120;
  };
  for (const Case& c : std::vector<Case>{
           {"keep failing",
            [](StaleFixture& f) {
              f.o.onError(api::Kind::Pod, {"watch", 0, "connection refused"});
            },
            true},
           {"watch accepted", [](StaleFixture& f) { f.o.onWatchOpened(api::Kind::Pod); }, false},
           {"listed", [](StaleFixture& f) { f.o.onList(api::Kind::Pod, 1, 0.1); }, false},
           {"other kind fine", [](StaleFixture& f) { f.o.onWatchOpened(api::Kind::Node); }, true},
       }) {
    StaleFixture f;
    f.o.onError(api::Kind::Pod, {"watch", 500, "500 InternalError: boom"});
    f.clock->advance(60s);
    c.between(f);
    f.clock->advance(59s);
    EXPECT_THAT(f.stale(), IsEmpty()) << c.name << ": 119 s";
    f.clock->advance(1s);
    EXPECT_EQ(f.stale().size(), c.staleAt120 ? 1u : 0u) << c.name << ": 120 s";
  }
  StaleFixture f;
  f.o.onError(api::Kind::Pod, {"watch", 500, "500 InternalError: boom"});
  f.o.onError(api::Kind::Pod, {"watch", 0, "no answer within 30s: watch pods: cancelled"});
  f.clock->advance(125s);
  ASSERT_EQ(f.h.staleResources().size(), 1u);
  const StaleResource r = f.h.staleResources()[0];
  EXPECT_FALSE(r.denied);
  EXPECT_EQ(r.reason, "no answer within 30s: watch pods: cancelled") << "the latest failure";
  EXPECT_DOUBLE_EQ(r.seconds, 125) << "since the first";
  f.o.onWatchOpened(api::Kind::Pod);
  EXPECT_THAT(f.stale(), IsEmpty());
}

TEST(CacheHealthStale, WarnsOnceThenEveryMinuteAndSaysWhenFresh) {
  LogLines logs;
  StaleFixture f;
  for (int i = 0; i < 5; ++i) {
    f.o.onError(api::Kind::Pod, {"watch", 403, kWatchForbidden});
    f.h.stale();
    f.clock->advance(10s);
  }
  auto first = logs.with("cache stale");
  ASSERT_EQ(first.size(), 1u) << "one warning for the episode, not one per failure or question";
  EXPECT_THAT(first[0], HasSubstr("level=warn"));
  EXPECT_THAT(first[0], HasSubstr("resource=pods verb=watch reason=\"403 Forbidden: pods is forbidden: User "));
  EXPECT_THAT(first[0], HasSubstr("hint=\"grant watch on pods to kdesched's identity"));
  EXPECT_THAT(logs.with("cache still stale"), IsEmpty());
  f.clock->advance(15s);  // 65 s after the first warning
  f.h.stale();
  f.h.stale();
  EXPECT_EQ(logs.with("cache still stale").size(), 1u);
  f.o.onList(api::Kind::Pod, 3, 0.1);
  f.o.onWatchOpened(api::Kind::Pod);
  auto fresh = logs.with("cache fresh again");
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_THAT(fresh[0], HasSubstr("level=info msg=\"cache fresh again\" resource=pods stale_seconds=65"));
  f.h.stale();
  EXPECT_EQ(logs.with("cache fresh again").size(), 1u);
}

// An object the API server holds that kdesched cannot decode: the resource is stale while any is
// known (a pod left out would make its node look emptier than it is), whatever else works.
TEST(CacheHealthStale, UndecodableObjectsAreStaleUntilNoneIsLeft) {
  LogLines logs;
  StaleFixture f;
  f.o.onList(api::Kind::Pod, 3, 0.1);
  f.o.onWatchOpened(api::Kind::Pod);
  f.o.onUndecodable(api::Kind::Pod, 1, "default/web: spec.containers[0].resources.requests.cpu: invalid quantity");
  EXPECT_THAT(f.stale(), ElementsAre("pods decode"));
  EXPECT_EQ(f.h.stale(),
            "pods (decode: an object kdesched cannot decode: default/web: spec.containers[0].resources.requests.cpu: "
            "invalid quantity)");
  ASSERT_EQ(f.h.staleResources().size(), 1u);
  const StaleResource r = f.h.staleResources()[0];
  EXPECT_TRUE(r.undecodable);
  EXPECT_FALSE(r.denied) << "a one-shot run ends on it as on any stale cache, not as refused access";
  EXPECT_THAT(r.hint(), HasSubstr("fix or delete the object, or run a kdesched release that reads it"));
  ASSERT_EQ(logs.with("cache stale").size(), 1u);
  EXPECT_THAT(logs.with("cache stale")[0], HasSubstr("verb=decode"));

  f.o.onUndecodable(api::Kind::Pod, 2, "default/a: x");
  f.o.onWatchOpened(api::Kind::Pod);
  EXPECT_THAT(f.h.stale(), HasSubstr("2 objects kdesched cannot decode, the first: default/a: x"));
  f.o.onUndecodable(api::Kind::Pod, 0, "");
  EXPECT_THAT(f.stale(), IsEmpty());
  EXPECT_EQ(logs.with("cache fresh again").size(), 1u);
}

}  // namespace
}  // namespace kdesched::kube
