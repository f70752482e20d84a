#include "pkg/api/timestamp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>

namespace kdesched::api {
namespace {

using ::testing::HasSubstr;

struct TimestampCase {
  const char* text;
  std::optional<Timestamp> want;
};

class TimestampTest : public ::testing::TestWithParam<TimestampCase> {};

TEST_P(TimestampTest, ParsesRfc3339) {
  const auto& c = GetParam();
  auto r = parseTimestamp(c.text);
  if (c.want) {
    ASSERT_TRUE(r.isOk()) << c.text << ": " << r.error();
    EXPECT_EQ(*r, *c.want) << c.text;
  } else {
    ASSERT_FALSE(r.isOk()) << c.text;
    EXPECT_THAT(r.error(), HasSubstr(c.text));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, TimestampTest,
    ::testing::Values(
        TimestampCase{"2024-01-02T03:04:05Z", 1704164645}, TimestampCase{"1970-01-01T00:00:00Z", 0},
        TimestampCase{"1969-12-31T23:59:59Z", -1}, TimestampCase{"2024-01-02T03:04:05.123456789Z", 1704164645},
        TimestampCase{"2024-01-02T05:04:05+02:00", 1704164645}, TimestampCase{"2024-01-01T21:34:05-05:30", 1704164645},
        TimestampCase{"2024-02-29T00:00:00Z", 1709164800}, TimestampCase{"2000-03-01T00:00:00Z", 951868800},
        TimestampCase{"2023-02-29T00:00:00Z", std::nullopt}, TimestampCase{"2024-13-01T00:00:00Z", std::nullopt},
        TimestampCase{"2024-01-02 03:04:05Z", std::nullopt}, TimestampCase{"2024-01-02t03:04:05Z", std::nullopt},
        TimestampCase{"2024-01-02T03:04:05", std::nullopt}, TimestampCase{"2024-01-02T03:04:60Z", std::nullopt},
        TimestampCase{"2024-01-02T24:00:00Z", std::nullopt}, TimestampCase{"2024-01-02T03:04:05.Z", std::nullopt},
        TimestampCase{"2024-01-02T03:04:05+0200", std::nullopt},
        TimestampCase{"2024-01-02T03:04:05Zjunk", std::nullopt}, TimestampCase{"", std::nullopt},
        TimestampCase{"yesterday", std::nullopt}));

}  // namespace
}  // namespace kdesched::api
