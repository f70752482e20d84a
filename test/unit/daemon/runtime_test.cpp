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

}  // namespace
}  // namespace kdesched::kube::testing
