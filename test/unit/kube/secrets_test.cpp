// Credentials never reach a log line or an error message, at any verbosity: every request path of
// the client (success, a 401 and its token re-read, throttling, server and transport errors, a
// paged LIST, a WATCH that is refused) and a reflector on top, all at trace level (-v 10), with
// a token that would be recognised anywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pkg/kube/cpprest_transport.h"
#include "pkg/kube/reflector.h"
#include "test/unit/kube/fakes.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kToken = "kd-SECRET-token-8f3a1c";
const std::string kKeySecret = "kd-SECRET-key-77e2";

TEST(Secrets, NoTokenInAnyLogLineOrErrorAtTraceLevel) {
  LogCapture logs(log::Level::Trace);
  auto clock = std::make_shared<FakeClock>();
  ClientConfig cfg;
  cfg.server = "https://api:6443";
  cfg.bearerToken = kToken;
  cfg.qps = -1;
  cfg.requestTimeout = {};  // its timer would sleep on the fake clock, whose sleeps return at once
  auto owned = std::make_unique<FakeTransport>();
  FakeTransport* transport = owned.get();
  Client client(cfg, std::move(owned), clock);
  std::vector<std::string> errors;

  transport->onSend(Scripted::json(R"({"gitVersion":"v1.31.0"})"));
  EXPECT_TRUE(client.get("/version").isOk());
  Scripted throttled = Scripted::json(statusJson(429, "TooManyRequests", "slow down"), 429);
  throttled.headers = {{"Retry-After", "1"}};
  // A 401 and the token re-read, twice; a 429 waited out, then a 500; no connection at all.
  for (int i = 0; i < 2; ++i) transport->onSend(Scripted::json(statusJson(401, "Unauthorized", "Unauthorized"), 401));
  transport->onSend(throttled);
  transport->onSend(Scripted::json(statusJson(500, "InternalError", "boom"), 500));
  transport->onSend(Scripted::failure("connection refused"));
  for (int i = 0; i < 3; ++i) {
    auto r = client.get("/api/v1/nodes");
    if (!r.isOk()) errors.push_back(r.error().describe());
  }
  transport->onSend(throttled);  // an eviction is not retried: the 429 is its answer
  auto eviction = client.post("/api/v1/namespaces/d/pods/p/eviction", "{}");
  if (!eviction.isOk()) errors.push_back(eviction.error().describe());

  // A reflector: a LIST in two pages, one item it cannot decode, a refused WATCH, the relist.
  std::string bad = podJson("b", "6");
  bad.replace(bad.find("100m"), 4, "12x");
  transport->onSend(Scripted::json(podList({podJson("a", "5")}, "10", "more")));
  transport->onSend(Scripted::json(podList({bad}, "10")));
  Scripted forbidden = Scripted::json(statusJson(403, "Forbidden", "pods is forbidden"), 403);
  forbidden.end = Scripted::End::Close;
  transport->onWatch(forbidden);
  transport->onSend(Scripted::json(podList({podJson("a", "5")}, "12")));
  cluster::Store store;
  ReflectorOptions ro;
  ro.clock = clock;
  ro.random = [] { return 0.0; };
  ro.watchList = false;  // the paged LIST's requests, scripted above
  Reflector reflector(client, kPods, store, ro);
  reflector.start();
  ASSERT_TRUE(waitUntil([&] { return transport->watched().size() >= 2; }));
  reflector.stop();

  const std::vector<std::string> lines = logs.lines();
  ASSERT_GT(lines.size(), 10u) << "the paths above log at trace level";
  EXPECT_THAT(lines, Contains(HasSubstr("msg=\"kube request\" method=GET target=/version code=200")))
      << "each request is traced";
  for (const std::string& line : lines) {
    EXPECT_THAT(line, Not(HasSubstr(kToken))) << line;
    EXPECT_THAT(line, Not(HasSubstr("Bearer"))) << line;
  }
  ASSERT_EQ(errors.size(), 4u);
  for (const std::string& e : errors) EXPECT_THAT(e, Not(HasSubstr(kToken))) << e;
  // The token was sent, so there was something to leak.
  ASSERT_FALSE(transport->sent().empty());
  EXPECT_EQ(findHeader(transport->sent().front().headers, "Authorization"), "Bearer " + kToken);
}

// A client key that does not parse, or a certificate without its key: the error names the field,
// never the key's bytes.
TEST(Secrets, NoClientKeyInTransportErrors) {
  LogCapture logs(log::Level::Trace);
  ClientConfig cfg;
  cfg.server = "https://api:6443";
  cfg.clientCertData = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  cfg.clientKeyData = "-----BEGIN PRIVATE KEY-----\n" + kKeySecret + "\n-----END PRIVATE KEY-----\n";
  auto bad = makeCpprestTransport(cfg);
  ASSERT_FALSE(bad.isOk());
  EXPECT_THAT(bad.error(), Not(HasSubstr(kKeySecret)));
  cfg.clientCertData.clear();
  auto half = makeCpprestTransport(cfg);
  ASSERT_FALSE(half.isOk());
  EXPECT_THAT(half.error(), Not(HasSubstr(kKeySecret)));
  for (const std::string& line : logs.lines()) EXPECT_THAT(line, Not(HasSubstr(kKeySecret))) << line;
}

}  // namespace
}  // namespace kdesched::kube::testing
