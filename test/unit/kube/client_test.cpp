#include "pkg/kube/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/kube/fakes.h"
#include "test/unit/kube/support.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string podName(const api::Object& o) { return std::get<api::Pod>(o).name; }

std::vector<std::string> names(const std::vector<api::Object>& objs) {
  std::vector<std::string> out;
  for (const auto& o : objs) out.push_back(podName(o));
  return out;
}

class ClientTest : public ::testing::Test {
 protected:
  ClientTest() { makeClient(); }

  void makeClient(ClientConfig cfg = defaultConfig()) {
    auto t = std::make_unique<FakeTransport>();
    transport_ = t.get();
    client_ = std::make_unique<Client>(std::move(cfg), std::move(t), clock_);
  }

  static ClientConfig defaultConfig() {
    ClientConfig cfg;
    cfg.server = "https://api:6443";
    cfg.bearerToken = "tok";
    cfg.qps = -1;  // most tests are not about rate limiting
    // The request timeout's timer sleeps on the clock, and this fake clock's sleeps return at once.
    cfg.requestTimeout = {};
    return cfg;
  }

  static Scripted throttled(const std::string& retryAfter) {
    Scripted s = Scripted::json(statusJson(429, "TooManyRequests", "too many requests, please try again later"), 429);
    s.headers = {{"Retry-After", retryAfter}, {"X-Kubernetes-PF-FlowSchema-UID", "fs-1"}};
    return s;
  }

  std::shared_ptr<FakeClock> clock_ = std::make_shared<FakeClock>();
  FakeTransport* transport_ = nullptr;
  std::unique_ptr<Client> client_;
};

// ---------------------------------------------------------------------------------------------
// Rate limiting

TEST(TokenBucket, BurstThenQps) {
  auto clock = std::make_shared<FakeClock>();
  TokenBucket bucket(5, 10, clock);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bucket.reserve(), Clock::Duration::zero()) << i;
  EXPECT_EQ(bucket.reserve(), 200ms);  // the 11th waits one token's worth at 5/s
  EXPECT_EQ(bucket.reserve(), 400ms);  // and queues behind it
  clock->advance(1s);                  // 5 tokens accrue; 2 were already promised
  EXPECT_EQ(bucket.reserve(), Clock::Duration::zero());
  EXPECT_EQ(bucket.reserve(), Clock::Duration::zero());
  EXPECT_EQ(bucket.reserve(), Clock::Duration::zero());
  EXPECT_EQ(bucket.reserve(), 200ms);
  clock->advance(1h);  // never more than the burst
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bucket.reserve(), Clock::Duration::zero());
  EXPECT_GT(bucket.reserve(), Clock::Duration::zero());
}

TEST(TokenBucket, UpstreamDefaultsAndDisabling) {
  auto clock = std::make_shared<FakeClock>();
  TokenBucket defaults(0, 0, clock);
  EXPECT_EQ(defaults.qps(), 5);
  EXPECT_EQ(defaults.burst(), 10);
  TokenBucket off(-1, 0, clock);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(off.reserve(), Clock::Duration::zero());
}

TEST_F(ClientTest, RequestsWaitForTheRateLimiter) {
  ClientConfig cfg = defaultConfig();
  cfg.qps = 2;
  cfg.burst = 1;
  makeClient(cfg);
  for (int i = 0; i < 3; ++i) transport_->onSend(Scripted::json("{}"));
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client_->get("/api/v1/nodes").isOk());
  // The burst of one goes at once; each further request waits 1/qps.
  EXPECT_THAT(clock_->sleeps(), ElementsAre(500ms, 500ms));
  EXPECT_EQ(transport_->sent().size(), 3u);
}

// ---------------------------------------------------------------------------------------------
// 429 and Retry-After

TEST_F(ClientTest, RetryAfterIsHonoured) {
  transport_->onSend(throttled("3"));
  transport_->onSend(Scripted::json(R"({"kind":"Node"})"));
  auto r = client_->get("/api/v1/nodes/n1");
  ASSERT_TRUE(r.isOk()) << r.error().describe();
  EXPECT_EQ(r->body, R"({"kind":"Node"})");
  EXPECT_THAT(clock_->sleeps(), ElementsAre(3s));
  EXPECT_EQ(transport_->sent().size(), 2u);
}

TEST_F(ClientTest, ThrottleRetriesAreBounded) {
  for (int i = 0; i < 20; ++i) transport_->onSend(throttled("0"));
  auto r = client_->get("/api/v1/nodes");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.error().code, 429);
  EXPECT_EQ(r.error().reason, "TooManyRequests");
  EXPECT_EQ(transport_->sent().size(), 1u + Client::kMaxThrottleRetries);
  // A Retry-After of 0 still waits a second: repeating it at once would be a retry storm.
  EXPECT_EQ(clock_->sleeps(), std::vector<Clock::Duration>(Client::kMaxThrottleRetries, 1s));
}

TEST_F(ClientTest, ThrottledRequestsTheClientLeavesToTheCaller) {
  // No Retry-After: nothing says when to come back.
  transport_->onSend(Scripted::json(statusJson(429, "TooManyRequests", "slow down"), 429));
  EXPECT_EQ(client_->get("/api/v1/pods").error().code, 429);
  // Longer than we are willing to sleep: the caller gets the hint.
  transport_->onSend(throttled("600"));
  auto longWait = client_->get("/api/v1/pods");
  EXPECT_EQ(longWait.error().retryAfter, std::chrono::seconds(600));
  // The eviction subresource: a 429 there is about a PDB, and retrying is the evictor's call.
  Scripted pdb = Scripted::json(
      R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"Cannot evict pod as it would violate the pod's disruption budget.","details":{"causes":[{"reason":"DisruptionBudget","message":"The disruption budget web needs 2 healthy pods and has 2 currently"}]}})",
      429);
  pdb.headers = {{"Retry-After", "1"}};
  transport_->onSend(pdb);
  auto evict = client_->post("/api/v1/namespaces/default/pods/web-1/eviction", R"({"kind":"Eviction"})");
  ASSERT_FALSE(evict.isOk());
  EXPECT_TRUE(evict.error().hasCause("DisruptionBudget"));
  // Opting out explicitly.
  transport_->onSend(throttled("1"));
  RequestOptions noRetry;
  noRetry.retryThrottled = false;
  EXPECT_EQ(client_->get("/api/v1/pods", noRetry).error().code, 429);

  EXPECT_EQ(transport_->sent().size(), 4u);
  EXPECT_TRUE(clock_->sleeps().empty());
}

// ---------------------------------------------------------------------------------------------
// Auth, headers, errors

TEST_F(ClientTest, UnauthorizedRereadsTheTokenFileOnce) {
  TempDir dir;
  ClientConfig cfg = defaultConfig();
  cfg.bearerToken.clear();
  cfg.tokenFile = dir.write("token", "old");
  makeClient(cfg);
  transport_->onSend(Scripted::json("{}"));
  ASSERT_TRUE(client_->get("/api").isOk());

  dir.write("token", "new");  // rotated; the cached copy is still within its minute
  transport_->onSend(Scripted::json(statusJson(401, "Unauthorized", "Unauthorized"), 401));
  transport_->onSend(Scripted::json("{}"));
  ASSERT_TRUE(client_->get("/api").isOk());

  transport_->onSend(Scripted::json(statusJson(401, "Unauthorized", "Unauthorized"), 401));
  transport_->onSend(Scripted::json(statusJson(401, "Unauthorized", "Unauthorized"), 401));
  auto denied = client_->get("/api");
  ASSERT_FALSE(denied.isOk());
  EXPECT_EQ(denied.error().code, 401);

  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 5u) << "one retry per request, never a loop";
  EXPECT_EQ(findHeader(sent[0].headers, "Authorization"), "Bearer old");
  EXPECT_EQ(findHeader(sent[1].headers, "Authorization"), "Bearer old");
  EXPECT_EQ(findHeader(sent[2].headers, "Authorization"), "Bearer new");
}

TEST_F(ClientTest, SendsAuthAgentAndContentTypes) {
  transport_->onSend(Scripted::json("{}"));
  transport_->onSend(Scripted::json("{}"));
  transport_->onSend(Scripted::json("{}"));
  ASSERT_TRUE(client_->get("/api/v1/nodes").isOk());
  ASSERT_TRUE(client_->patch("/api/v1/nodes/n1", R"({"metadata":{}})").isOk());
  RequestOptions strategic;
  strategic.contentType = "application/strategic-merge-patch+json";
  ASSERT_TRUE(client_->patch("/api/v1/nodes/n1", "{}", strategic).isOk());
  const auto sent = transport_->sent();
  EXPECT_EQ(findHeader(sent[0].headers, "Authorization"), "Bearer tok");
  EXPECT_THAT(findHeader(sent[0].headers, "User-Agent"), ::testing::StartsWith("kdesched/"));
  EXPECT_EQ(findHeader(sent[0].headers, "Accept"), "application/json");
  EXPECT_EQ(findHeader(sent[0].headers, "Content-Type"), "");
  EXPECT_EQ(sent[1].method, "PATCH");
  EXPECT_EQ(sent[1].body, R"({"metadata":{}})");
  EXPECT_EQ(findHeader(sent[1].headers, "Content-Type"), "application/merge-patch+json");
  EXPECT_EQ(findHeader(sent[2].headers, "Content-Type"), "application/strategic-merge-patch+json");
}

TEST_F(ClientTest, ErrorsCarryTheServersStatus) {
  transport_->onSend(Scripted::json(statusJson(404, "NotFound", "pods \\\"web-1\\\" not found"), 404));
  auto nf = client_->get("/api/v1/namespaces/default/pods/web-1");
  ASSERT_FALSE(nf.isOk());
  EXPECT_EQ(nf.error().code, 404);
  EXPECT_EQ(nf.error().reason, "NotFound");
  EXPECT_EQ(nf.error().message, "pods \"web-1\" not found");
  EXPECT_EQ(nf.error().describe(), "404 NotFound: pods \"web-1\" not found");

  transport_->onSend(Scripted::json("<html>bad gateway</html>", 500));
  auto html = client_->get("/api");
  EXPECT_EQ(html.error().describe(), "500 Internal Server Error: <html>bad gateway</html>");

  transport_->onSend(Scripted::failure("Failed to connect to any resolved endpoint"));
  auto down = client_->get("/api");
  EXPECT_EQ(down.error().code, 0);
  EXPECT_THAT(down.error().describe(), HasSubstr("no response: GET /api: Failed to connect"));
}

// ---------------------------------------------------------------------------------------------
// Paginated LIST

TEST_F(ClientTest, ListFollowsContinueTokensAcrossPages) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("b", "6")}, "10", "tok+1/=")));
  transport_->onSend(Scripted::json(podList({podJson("c", "7")}, "10", "tok2")));
  transport_->onSend(Scripted::json(podList({podJson("d", "8")}, "10")));
  ListOptions lo;
  lo.resourceVersion = "0";
  auto r = client_->list(kPods, lo);
  ASSERT_TRUE(r.isOk()) << r.error().describe();
  EXPECT_THAT(names(r->objects), ElementsAre("a", "b", "c", "d"));
  EXPECT_EQ(r->resourceVersion, "10");
  EXPECT_EQ(r->pages, 3);
  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0].target, "/api/v1/pods?limit=500&resourceVersion=0");
  // The token pins the snapshot; the server rejects resourceVersion next to it.
  EXPECT_EQ(sent[1].target, "/api/v1/pods?limit=500&continue=tok%2B1%2F%3D");
  EXPECT_EQ(sent[2].target, "/api/v1/pods?limit=500&continue=tok2");
  const auto& pod = std::get<api::Pod>(r->objects[3]);
  EXPECT_EQ(pod.key(), "default/d");
  EXPECT_EQ(pod.nodeName.str(), "n1");
}

TEST_F(ClientTest, ExpiredContinueTokenRestartsTheList) {
  transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10", "t1")));
  transport_->onSend(Scripted::json(
      statusJson(410, "Expired", "The provided continue parameter is too old to display a consistent list result."),
      410));
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), podJson("b", "11")}, "20", "t2")));
  transport_->onSend(Scripted::json(podList({podJson("c", "12")}, "20")));
  auto r = client_->list(kPods, ListOptions{});
  ASSERT_TRUE(r.isOk()) << r.error().describe();
  EXPECT_THAT(names(r->objects), ElementsAre("a", "b", "c")) << "nothing from the abandoned pass is kept twice";
  EXPECT_EQ(r->resourceVersion, "20");
  EXPECT_EQ(r->restarts, 1);
  const auto sent = transport_->sent();
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[2].target, "/api/v1/pods?limit=500");
}

TEST_F(ClientTest, ListRestartsAreBoundedAndAFirstPage410IsReturned) {
  for (int i = 0; i <= Client::kMaxListRestarts; ++i) {
    transport_->onSend(Scripted::json(podList({podJson("a", "5")}, "10", "t")));
    transport_->onSend(Scripted::json(statusJson(410, "Expired", "too old"), 410));
  }
  auto r = client_->list(kPods, ListOptions{});
  ASSERT_FALSE(r.isOk());
  EXPECT_TRUE(r.error().isGone());
  EXPECT_EQ(transport_->sent().size(), 2u * (Client::kMaxListRestarts + 1));

  transport_->onSend(Scripted::json(statusJson(410, "Expired", "too old resource version: 5 (90)"), 410));
  ListOptions lo;
  lo.resourceVersion = "5";
  lo.limit = 0;
  auto gone = client_->list(kPods, lo);
  ASSERT_FALSE(gone.isOk());
  EXPECT_TRUE(gone.error().isGone());
  EXPECT_EQ(transport_->sent().back().target, "/api/v1/pods?resourceVersion=5");
}

// One item that does not decode failed the whole page, so the cache never synced: it is left out
// and named, across pages. A page that is not JSON still fails.
TEST_F(ClientTest, AnUndecodableItemIsLeftOutAndNamed) {
  std::string bad = podJson("b", "6");
  bad.replace(bad.find("100m"), 4, "12x");
  transport_->onSend(Scripted::json(podList({podJson("a", "5"), bad}, "10", "next")));
  transport_->onSend(Scripted::json(podList({podJson("c", "7")}, "10")));
  auto r = client_->list(kPods, ListOptions{});
  ASSERT_TRUE(r.isOk()) << r.error().describe();
  EXPECT_EQ(r->objects.size(), 2u);
  ASSERT_EQ(r->undecodable.size(), 1u);
  EXPECT_EQ(r->undecodable[0].key, "default/b");
  EXPECT_EQ(r->undecodable[0].error, "spec.containers[0].resources.requests.cpu: invalid quantity \"12x\"");

  // Broken JSON inside an item is a broken page, not an undecodable object.
  transport_->onSend(Scripted::json(
      podList({podJson("a", "5"), R"({"metadata":{"name":"b","namespace":"x",}})", podJson("c", "7")}, "10")));
  auto broken = client_->list(kPods, ListOptions{});
  ASSERT_FALSE(broken.isOk());
  EXPECT_EQ(broken.error().reason, "InvalidResponse");

  transport_->onSend(Scripted::json(R"({"kind":"PodList","items":[{"metadata":{"name":"a"})"));
  auto truncated = client_->list(kPods, ListOptions{});
  ASSERT_FALSE(truncated.isOk());
  EXPECT_THAT(truncated.error().describe(), HasSubstr("InvalidResponse"));
}

// ---------------------------------------------------------------------------------------------
// WATCH

TEST_F(ClientTest, WatchRequestAndEvents) {
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "11")), "", bookmark("12")}, Scripted::End::Close));
  WatchOptions wo;
  wo.resourceVersion = "10";
  wo.timeout = 437s;
  auto w = client_->watch(kPods, wo);
  ASSERT_TRUE(w.isOk()) << w.error().describe();
  const auto seen = transport_->watched();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].target, "/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=10&timeoutSeconds=437");
  EXPECT_GT(seen[0].timeout, 437s) << "the client must not cut a quiet watch before the server ends it";

  WatchEvent ev;
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ(ev.type, WatchEventType::Added);
  EXPECT_EQ(ev.resourceVersion, "11");
  EXPECT_EQ(podName(ev.object), "a");
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event) << "blank keep-alive lines are skipped";
  EXPECT_EQ(ev.type, WatchEventType::Bookmark);
  EXPECT_EQ(ev.resourceVersion, "12");
  EXPECT_EQ((*w)->next(ev), WatchStream::Next::Closed);
}

TEST_F(ClientTest, WatchListRequestAndItsClosingBookmark) {
  transport_->onWatch(Scripted::watch({event("ADDED", podJson("a", "11")), bookmark("12"), initialEventsEnd("13")},
                                      Scripted::End::Close));
  WatchOptions wo;
  wo.sendInitialEvents = true;
  auto w = client_->watch(kPods, wo);
  ASSERT_TRUE(w.isOk()) << w.error().describe();
  // As client-go's reflector asks: no resourceVersion (the newest state), bookmarks allowed.
  EXPECT_EQ(transport_->watched()[0].target,
            "/api/v1/pods?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
            "&timeoutSeconds=300");
  WatchEvent ev;
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_FALSE(ev.initialEventsEnd);
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ(ev.type, WatchEventType::Bookmark);
  EXPECT_FALSE(ev.initialEventsEnd) << "a plain bookmark";
  ASSERT_EQ((*w)->next(ev), WatchStream::Next::Event);
  EXPECT_EQ(ev.type, WatchEventType::Bookmark);
  EXPECT_EQ(ev.resourceVersion, "13");
  EXPECT_TRUE(ev.initialEventsEnd);
}

TEST(DecodeWatchEvent, TheInitialEventsEndAnnotation) {
  api::JsonParser parser;
  const auto decode = [&](const std::string& metadata) {
    std::string line = event("BOOKMARK", R"({"kind":"Pod","metadata":)" + metadata + R"(,"spec":{"containers":null}})");
    WatchEvent ev;
    Status st = decodeWatchEvent(api::Kind::Pod, line, parser, ev);
    EXPECT_TRUE(st.isOk()) << metadata << ": " << st.message();
    EXPECT_EQ(ev.resourceVersion, "7") << metadata;
    return ev.initialEventsEnd;
  };
  EXPECT_TRUE(decode(R"({"annotations":{"a":"b","k8s.io/initial-events-end":"true"},"resourceVersion":"7"})"));
  EXPECT_FALSE(decode(R"({"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"false"}})"));
  EXPECT_FALSE(decode(R"({"resourceVersion":"7","annotations":null})"));
  EXPECT_FALSE(decode(R"({"resourceVersion":"7","creationTimestamp":null})"));

  std::string line =
      event("BOOKMARK", R"({"metadata":{"annotations":{"k8s.io/initial-events-end":true},"resourceVersion":"7"}})");
  WatchEvent ev;
  EXPECT_THAT(decodeWatchEvent(api::Kind::Pod, line, parser, ev).message(),
              HasSubstr("object.metadata.annotations[k8s.io/initial-events-end]"));
  line = event("BOOKMARK", R"({"metadata":{"annotations":{}}})");
  EXPECT_THAT(decodeWatchEvent(api::Kind::Pod, line, parser, ev).message(),
              HasSubstr("object.metadata.resourceVersion: missing"));
  line = event("ADDED", podJson("a", "5"));
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Pod, line, parser, ev).isOk());
  EXPECT_FALSE(ev.initialEventsEnd) << "reset with every event";
}

TEST_F(ClientTest, WatchRefusedWithGone) {
  Scripted gone;
  gone.status = 410;
  gone.body = statusJson(410, "Expired", "too old resource version: 10 (500)");
  gone.end = Scripted::End::Close;
  transport_->onWatch(gone);
  WatchOptions wo;
  wo.resourceVersion = "10";
  auto w = client_->watch(kPods, wo);
  ASSERT_FALSE(w.isOk());
  EXPECT_TRUE(w.error().isGone());
  EXPECT_EQ(w.error().message, "too old resource version: 10 (500)");
}

TEST(DecodeWatchEvent, TypesAndFieldOrder) {
  api::JsonParser parser;
  WatchEvent ev;
  std::string line = event("DELETED", podJson("gone", "42", "n2", "kube-system"));
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Pod, line, parser, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Deleted);
  EXPECT_EQ(std::get<api::Pod>(ev.object).key(), "kube-system/gone");
  EXPECT_EQ(ev.resourceVersion, "42");

  line = R"({"object":)" + podJson("late", "43") + R"(,"type":"MODIFIED"})";
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Pod, line, parser, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Modified);
  EXPECT_EQ(podName(ev.object), "late");
  EXPECT_EQ(ev.resourceVersion, "43");

  line = event("ERROR", statusJson(410, "Expired", "too old resource version: 1 (2)"));
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Pod, line, parser, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Error);
  EXPECT_TRUE(ev.error.isGone());
  EXPECT_EQ(ev.error.reason, "Expired");

  line = event("ADDED", R"({"metadata":{"name":"n9","resourceVersion":"7","labels":{"zone":"a"}},"spec":{}})");
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Node, line, parser, ev).isOk());
  EXPECT_EQ(std::get<api::Node>(ev.object).name, "n9");
}

// A well-formed event whose object does not decode: the event is kept (its resourceVersion moves
// the watch on), the object is not, and what did not decode is named.
TEST(DecodeWatchEvent, AnUndecodableObjectIsNamedNotHalfDecoded) {
  api::JsonParser parser;
  std::string line = event("MODIFIED", podJson("a", "5"));
  line.replace(line.find("100m"), 4, "lots");
  WatchEvent ev;
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Pod, line, parser, ev).isOk());
  EXPECT_EQ(ev.type, WatchEventType::Modified);
  EXPECT_EQ(ev.resourceVersion, "5");
  ASSERT_TRUE(ev.undecodable);
  EXPECT_EQ(ev.undecodable->key, "default/a");
  EXPECT_EQ(ev.undecodable->error, "spec.containers[0].resources.requests.cpu: invalid quantity \"lots\"");
  EXPECT_EQ(podName(ev.object), "") << "nothing of the object is handed out";

  // Without its namespace its key is unknown (not "/x"): the reflector relists.
  line = event("ADDED", R"({"metadata":{"name":"x","resourceVersion":"1"},"spec":{"containers":"nope"}})");
  ASSERT_TRUE(decodeWatchEvent(api::Kind::Pod, line, parser, ev).isOk());
  ASSERT_TRUE(ev.undecodable);
  EXPECT_EQ(ev.undecodable->key, "");
  EXPECT_EQ(ev.undecodable->error, "spec.containers: expected array, got string");
}

TEST(DecodeWatchEvent, MalformedLinesAreErrorsNotCrashes) {
  api::JsonParser parser;
  const std::string good = event("ADDED", podJson("a", "5"));
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() - 1), "malformed JSON"},
      {good.substr(0, good.size() / 2), "malformed JSON"},
      {good + "{}", "trailing content"},
      {"not json at all", "malformed JSON"},
      {"[1,2,3]", "malformed JSON"},
      {R"({"type":"EXPLODED","object":{}})", "unknown watch event type"},
      {R"({"type":"ADDED"})", "object: missing"},
      {R"({"object":{"metadata":{"resourceVersion":"1"}}})", "type: missing"},
      {event("ADDED", R"({"metadata":{"name":"x"}})"), "resourceVersion: missing"},
      {event("ADDED", R"({"spec":{}})"), "object.metadata: missing"},
      // fuzz_watch_event: the second type turned a bookmark into a MODIFIED event of an empty pod.
      {R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":""}},"type":"MODIFIED"})",
       "type: appears more than once"},
      {R"({"object":{"metadata":{"resourceVersion":"1"}},"type":"DELETED","object":{}})",
       "object: appears more than once"},
  };
  for (const auto& [text, want] : cases) {
    std::string line = text;
    WatchEvent ev;
    Status st = decodeWatchEvent(api::Kind::Pod, line, parser, ev);
    EXPECT_FALSE(st.isOk()) << text;
    EXPECT_THAT(st.message(), HasSubstr(want)) << text;
  }
  std::string again = good;  // the parser is still usable afterwards
  WatchEvent ev;
  EXPECT_TRUE(decodeWatchEvent(api::Kind::Pod, again, parser, ev).isOk());
}

TEST(ApiError, StatusDecoding) {
  ApiError e = apiErrorFromResponse(
      429, "Too Many Requests", {{"retry-after", "7"}},
      R"({"kind":"Status","code":429,"reason":"TooManyRequests","message":"m","details":{"retryAfterSeconds":10,"causes":[{"reason":"DisruptionBudget","message":"x"}]}})");
  EXPECT_EQ(e.code, 429);
  EXPECT_EQ(e.retryAfter, std::chrono::seconds(7)) << "the header wins over details";
  EXPECT_TRUE(e.hasCause("DisruptionBudget"));
  EXPECT_FALSE(e.hasCause("FieldValueInvalid"));

  ApiError noHeader =
      apiErrorFromResponse(429, "", {}, R"({"kind":"Status","code":429,"details":{"retryAfterSeconds":10}})");
  EXPECT_EQ(noHeader.retryAfter, std::chrono::seconds(10));
  EXPECT_EQ(noHeader.reason, "");

  ApiError date =
      apiErrorFromResponse(503, "Service Unavailable", {{"Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"}}, "");
  EXPECT_FALSE(date.retryAfter.has_value());
  EXPECT_EQ(date.describe(), "503 Service Unavailable");
}

}  // namespace
}  // namespace kdesched::kube::testing
