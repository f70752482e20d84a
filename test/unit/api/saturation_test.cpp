// Amounts the API server stores and int64 milli-units cannot hold: they saturate, in parsing, in
// decoding and in every sum, instead of failing the object (and with it the whole resource).
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "pkg/api/decode.h"
#include "pkg/api/object.h"
#include "pkg/api/scheduling.h"
#include "test/unit/api/decode_fixtures.h"

namespace kdesched::api {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct SaturationCase {
  const char* text;
  std::int64_t milli;
  bool saturated;
};

class SaturatingParseTest : public ::testing::TestWithParam<SaturationCase> {};

TEST_P(SaturatingParseTest, SaturatesOnlyWhatDoesNotFit) {
  const auto& c = GetParam();
  auto q = parseQuantityMilliSaturating(c.text);
  ASSERT_TRUE(q.isOk()) << c.text << ": " << q.error();
  EXPECT_EQ(q->milli, c.milli) << c.text;
  EXPECT_EQ(q->saturated, c.saturated) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    Table, SaturatingParseTest,
    ::testing::Values(SaturationCase{.text = "9P", .milli = 9'000'000'000'000'000'000, .saturated = false},
                      SaturationCase{.text = "9223372036854775807m", .milli = kMax, .saturated = false},
                      SaturationCase{.text = "9223372036854775808m", .milli = kMax, .saturated = true},
                      SaturationCase{.text = "10P", .milli = kMax, .saturated = true},
                      SaturationCase{.text = "100E", .milli = kMax, .saturated = true},
                      SaturationCase{.text = "8Ei", .milli = kMax, .saturated = true},
                      SaturationCase{.text = "1e30", .milli = kMax, .saturated = true},
                      SaturationCase{.text = "1e1000000000", .milli = kMax, .saturated = true},
                      SaturationCase{.text = "-10P", .milli = -kMax, .saturated = true},
                      SaturationCase{.text = "1e15", .milli = 1'000'000'000'000'000'000, .saturated = false}));

TEST(SaturatingParseTest, IllegalTextIsStillAnError) {
  auto q = parseQuantityMilliSaturating("10PB");
  ASSERT_FALSE(q.isOk());
  EXPECT_EQ(q.error(), "invalid quantity \"10PB\"");
}

TEST(SaturatingArithmeticTest, SumsAndProductsClampAtTheSaturatedValue) {
  EXPECT_EQ(addSaturating(kMax, 1), kSaturatedMilli);
  EXPECT_EQ(addSaturating(kMax - 5, 3), kMax - 2);
  EXPECT_EQ(addSaturating(std::numeric_limits<std::int64_t>::min(), -1), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(mulSaturating(kMax / 2, 3), kSaturatedMilli);
  EXPECT_EQ(mulSaturating(4, 1000), 4000);
  EXPECT_EQ(milliFromDouble(9.3e18), kSaturatedMilli);
  EXPECT_EQ(milliFromDouble(1e300), kSaturatedMilli);
  EXPECT_EQ(milliFromDouble(-1e300), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(milliFromDouble(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(milliFromDouble(1500.7), 1500);
}

TEST(SaturationDecodeTest, APodRequestingTenPetabytesDecodesWithItsMemorySaturated) {
  auto pod = podFromJson(R"({"metadata":{"name":"hog","namespace":"t1"},
    "spec":{"containers":[{"name":"a","resources":{"requests":{"memory":"10P","cpu":"100m"},
                                                   "limits":{"memory":"10P"}}},
                          {"name":"b","resources":{"requests":{"memory":"9P"}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests.get(kMemory()), kSaturatedMilli);
  EXPECT_EQ(pod->requests.get(kCpu()), 100);
  EXPECT_EQ(saturatedFields(*pod), "requests memory");
}

TEST(SaturationDecodeTest, TwoContainersThatEachFitSaturateTheirSumAndTheQosSums) {
  // 5P + 5P = 10^19 milli: each fits, the pod's sum does not.
  auto pod = podFromJson(R"({"metadata":{"name":"two","namespace":"t1"},
    "spec":{"containers":[{"resources":{"requests":{"memory":"5P","cpu":"1"},"limits":{"memory":"5P","cpu":"1"}}},
                          {"resources":{"requests":{"memory":"5P","cpu":"1"},"limits":{"memory":"5P","cpu":"1"}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests.get(kMemory()), kSaturatedMilli);
  EXPECT_EQ(pod->qos, QosClass::Guaranteed);
  EXPECT_EQ(saturatedFields(*pod), "requests memory");
}

TEST(SaturationDecodeTest, ANodeWithAbsurdCapacityDecodesWithItSaturated) {
  auto obj = decodeObjectJson(R"({"kind":"Node","metadata":{"name":"virtual-1"},
    "status":{"capacity":{"cpu":"1e30","memory":"100E","pods":"1e15"},
              "allocatable":{"cpu":"1e30","memory":"100E","pods":"1e15"}}})");
  ASSERT_TRUE(obj.isOk()) << obj.error();
  const Node& node = std::get<Node>(*obj);
  EXPECT_EQ(node.allocatable.get(kCpu()), kSaturatedMilli);
  EXPECT_EQ(node.allocatable.get(kMemory()), kSaturatedMilli);
  EXPECT_EQ(node.allocatable.get(kPods()), 1'000'000'000'000'000'000);
  EXPECT_EQ(saturatedFields(*obj), "allocatable cpu,memory");
}

TEST(SaturationDecodeTest, OrdinaryObjectsNameNothingSaturated) {
  auto pod =
      podFromJson(R"({"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"memory":"9P"}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(saturatedFields(*pod), "");
}

}  // namespace
}  // namespace kdesched::api
