#include "pkg/daemon/runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test/unit/kube/fakes.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<Client> clientAnswering(Scripted answer, FakeTransport*& transport) {
  auto t = std::make_unique<FakeTransport>();
  t->onSend(std::move(answer));
  transport = t.get();
  ClientConfig c;
  c.server = "https://127.0.0.1:6443";
  c.requestTimeout = {};  // its timer would sleep on the fake clock, whose sleeps return at once
  return std::make_unique<Client>(c, std::move(t), std::make_shared<kdesched::testing::FakeClock>());
}

TEST(ReadPriorityClass, DecodesTheValue) {
  FakeTransport* t = nullptr;
  auto client = clientAnswering(Scripted::json(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
                                               R"("metadata":{"name":"high"},"value":1000,"globalDefault":false})"),
                                t);
  auto v = daemon::readPriorityClass(*client, "high");
  ASSERT_TRUE(v.isOk()) << v.error();
  EXPECT_EQ(*v, 1000);
  ASSERT_EQ(t->sent().size(), 1u);
  EXPECT_EQ(t->sent()[0].target, "/apis/scheduling.k8s.io/v1/priorityclasses/high");
}

TEST(ReadPriorityClass, NamesTheClassWhenItCannotBeRead) {
  FakeTransport* t = nullptr;
  auto missing = clientAnswering(
      Scripted::json(R"({"kind":"Status","code":404,"reason":"NotFound","message":"not found"})", 404), t);
  auto v = daemon::readPriorityClass(*missing, "nope");
  ASSERT_FALSE(v.isOk());
  EXPECT_THAT(v.error(), HasSubstr("cannot read PriorityClass \"nope\": 404"));

  auto wrong = clientAnswering(Scripted::json(R"({"kind":"Namespace","metadata":{"name":"x"}})"), t);
  v = daemon::readPriorityClass(*wrong, "x");
  ASSERT_FALSE(v.isOk());
  EXPECT_THAT(v.error(), HasSubstr("PriorityClass \"x\" has no readable value: the answer is not a PriorityClass"));

  auto garbled = clientAnswering(Scripted::json(R"({"kind":"PriorityClass","value":"high"})"), t);
  v = daemon::readPriorityClass(*garbled, "y");
  ASSERT_FALSE(v.isOk());
  EXPECT_THAT(v.error(), HasSubstr("PriorityClass \"y\" has no readable value: "));
}

// The start names the way to the API server, the proxy's userinfo redacted.
TEST(MakeClient, SaysWhichProxyTheApiServerIsReachedThrough) {
  LogCapture logs;
  ClientConfig c;
  c.server = "https://10.0.0.1:6443";
  c.proxyUrl = "http://alice:hunter2@proxy.corp:3128";
  c.tlsServerName = "api.internal";
  auto client = daemon::makeClient(c, 0, 0, 30, std::make_shared<kdesched::testing::FakeClock>());
  ASSERT_TRUE(client.isOk()) << client.error();
  const auto lines = logs.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], HasSubstr("msg=\"API server\" server=https://10.0.0.1:6443 "
                                  "proxy=\"http://redacted@proxy.corp:3128 (kubeconfig proxy-url)\" "
                                  "tls-server-name=api.internal"));
  EXPECT_THAT(lines[0], ::testing::Not(HasSubstr("hunter2")));

  c.proxyUrl.clear();
  c.tlsServerName.clear();
  c.server = "https://127.0.0.1:6443";
  ASSERT_TRUE(daemon::makeClient(c, 0, 0, 30, std::make_shared<kdesched::testing::FakeClock>()).isOk());
  ASSERT_EQ(logs.lines().size(), 2u);
  EXPECT_THAT(logs.lines()[1], HasSubstr("proxy=\"none (")) << "loopback, or no variable set";
}

}  // namespace
}  // namespace kdesched::kube::testing
