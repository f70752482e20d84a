#include "pkg/api/quantity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace kdesched::api {
namespace {

using ::testing::HasSubstr;

struct QuantityCase {
  const char* text;
  std::int64_t milli;
};

class QuantityParseTest : public ::testing::TestWithParam<QuantityCase> {};

TEST_P(QuantityParseTest, ParsesToMilliUnits) {
  const auto& c = GetParam();
  auto r = parseQuantityMilli(c.text);
  ASSERT_TRUE(r.isOk()) << c.text << ": " << r.error();
  EXPECT_EQ(*r, c.milli) << c.text;
}

INSTANTIATE_TEST_SUITE_P(
    LegalForms, QuantityParseTest,
    ::testing::Values(QuantityCase{"100m", 100}, QuantityCase{"1", 1000}, QuantityCase{"1.5", 1500},
                      QuantityCase{"2Gi", 2147483648000}, QuantityCase{"512Mi", 536870912000},
                      QuantityCase{"1Ki", 1024000}, QuantityCase{"1.5Gi", 1610612736000}, QuantityCase{"0.5Ki", 512000},
                      QuantityCase{"100.035Ki", 102435840}, QuantityCase{"1e3", 1000000}, QuantityCase{"1E3", 1000000},
                      QuantityCase{"1e+3", 1000000}, QuantityCase{"1e-3", 1}, QuantityCase{"2.5e2", 250000},
                      QuantityCase{"3000", 3000000}, QuantityCase{"1k", 1000000}, QuantityCase{"1M", 1000000000},
                      QuantityCase{"1G", 1000000000000}, QuantityCase{"1T", 1000000000000000},
                      QuantityCase{"1P", 1000000000000000000}, QuantityCase{"8Pi", 9007199254740992000},
                      QuantityCase{"9223372036854775807m", 9223372036854775807}, QuantityCase{"0", 0},
                      QuantityCase{"000", 0}, QuantityCase{"0.000", 0}, QuantityCase{"0Gi", 0},
                      QuantityCase{"+1", 1000}, QuantityCase{"-1", -1000}, QuantityCase{"-1.5Ki", -1536000},
                      QuantityCase{".5", 500}, QuantityCase{"5.", 5000}, QuantityCase{"1.G", 1000000000000},
                      QuantityCase{"007", 7000}, QuantityCase{"1.0001", 1001}, QuantityCase{"1.000", 1000},
                      // Everything below a milli-unit rounds up, never to zero.
                      QuantityCase{"1n", 1}, QuantityCase{"1u", 1}, QuantityCase{"1m", 1}, QuantityCase{"0.1m", 1},
                      QuantityCase{"1001u", 2}, QuantityCase{"0.000000000001Ki", 1}, QuantityCase{"1e-99999", 1},
                      QuantityCase{"0.0000000000000000000000000001", 1}, QuantityCase{"1.0000000000000000000001", 1001},
                      // Negative amounts round away from zero.
                      QuantityCase{"-1n", -1}, QuantityCase{"-0.1m", -1},
                      // Upstream's scanner lets every part be empty, so these are (odd but legal) zeros.
                      QuantityCase{"Mi", 0}, QuantityCase{".", 0}, QuantityCase{"-", 0}, QuantityCase{"0e999999", 0}));

class QuantityErrorTest : public ::testing::TestWithParam<const char*> {};

TEST_P(QuantityErrorTest, RejectsAndNamesTheText) {
  const std::string text = GetParam();
  auto r = parseQuantityMilli(text);
  ASSERT_FALSE(r.isOk()) << text << " parsed as " << *r;
  EXPECT_THAT(r.error(), HasSubstr("\"" + text + "\""));
}

INSTANTIATE_TEST_SUITE_P(Illegal, QuantityErrorTest,
                         ::testing::Values("12x", "", "1.2.3", "1 Gi", " 1", "1 ", "1K", "K", "1i", "0.1mi", "1e",
                                           "1e-", "1.1.M", "1+1.0M", "aoeu", "1ee3", "1e3k", "1KiB", "--1", "1e1.5",
                                           "0x10", "1e99999999999999999999"));

INSTANTIATE_TEST_SUITE_P(Overflow, QuantityErrorTest,
                         ::testing::Values("1E", "10P", "9Pi", "1Ei", "8Ei", "9223372036854775808m",
                                           "99999999999999999999", "1e16", "-1E"));

TEST(QuantityTest, OverflowMessageSaysItDoesNotFit) {
  auto r = parseQuantityMilli("1E");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.error(), "quantity \"1E\" does not fit in int64 milli-units");
  EXPECT_EQ(parseQuantityMilli("12x").error(), "invalid quantity \"12x\"");
}

struct FormatCase {
  std::int64_t milli;
  bool binary;
  const char* text;
};

class FormatMilliTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(FormatMilliTest, FormatsAndRoundTrips) {
  const auto& c = GetParam();
  EXPECT_EQ(formatMilli(c.milli, c.binary), c.text);
  auto back = parseQuantityMilli(c.text);
  ASSERT_TRUE(back.isOk()) << back.error();
  EXPECT_EQ(*back, c.milli);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FormatMilliTest,
    ::testing::Values(FormatCase{0, false, "0"}, FormatCase{250, false, "250m"}, FormatCase{2000, false, "2"},
                      FormatCase{1500, false, "1500m"}, FormatCase{1000000, false, "1k"},
                      FormatCase{1500000, false, "1500"}, FormatCase{-250, false, "-250m"},
                      FormatCase{4000000000, false, "4M"}, FormatCase{536870912000, true, "512Mi"},
                      FormatCase{1073741824000, true, "1Gi"}, FormatCase{1024000, true, "1Ki"},
                      FormatCase{1536000, true, "1536"}, FormatCase{1000, true, "1"}, FormatCase{500, true, "500m"},
                      FormatCase{-2147483648000, true, "-2Gi"},
                      FormatCase{std::numeric_limits<std::int64_t>::max(), false, "9223372036854775807m"}));

TEST(ResourceListTest, KeepsNamesSortedAndAddsAbsentAsZero) {
  ResourceList r{{"memory", 1000}, {"cpu", 250}};
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(r.begin()->first.view(), "cpu");
  EXPECT_EQ(r.get(kCpu()), 250);
  EXPECT_EQ(r.get(kPods()), 0);
  EXPECT_FALSE(r.has(kPods()));
  r.add(kCpu(), 750);
  r.add(Symbol("nvidia.com/gpu"), 1000);
  EXPECT_EQ(r.get(kCpu()), 1000);
  EXPECT_EQ(r.get(Symbol("nvidia.com/gpu")), 1000);
  r.set(kCpu(), 0);
  EXPECT_TRUE(r.has(kCpu()));  // a zero amount is still present, as in a v1.ResourceList
  EXPECT_EQ(r.get(kCpu()), 0);
}

TEST(ResourceListTest, AddAllAndMaxWith) {
  ResourceList a{{"cpu", 500}, {"memory", 1000}};
  const ResourceList b{{"cpu", 200}, {"ephemeral-storage", 7000}};
  ResourceList sum = a;
  sum.addAll(b);
  EXPECT_EQ(sum, (ResourceList{{"cpu", 700}, {"memory", 1000}, {"ephemeral-storage", 7000}}));
  a.maxWith(b);
  EXPECT_EQ(a, (ResourceList{{"cpu", 500}, {"memory", 1000}, {"ephemeral-storage", 7000}}));
}

TEST(ResourceListTest, AddSaturatesInsteadOfOverflowing) {
  ResourceList r{{"cpu", std::numeric_limits<std::int64_t>::max() - 1}};
  r.add(kCpu(), 10);
  EXPECT_EQ(r.get(kCpu()), std::numeric_limits<std::int64_t>::max());
}

TEST(ResourceListTest, ToStringUsesBinarySuffixesForBytes) {
  const ResourceList r{{"cpu", 250}, {"memory", 536870912000}, {"hugepages-2Mi", 2097152000}, {"pods", 110000}};
  EXPECT_EQ(r.toString(), "cpu=250m,hugepages-2Mi=2Mi,memory=512Mi,pods=110");
  EXPECT_TRUE(isBinaryResource("ephemeral-storage"));
  EXPECT_FALSE(isBinaryResource("cpu"));
}

}  // namespace
}  // namespace kdesched::api
