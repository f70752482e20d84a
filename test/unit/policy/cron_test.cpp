#include "pkg/policy/cron.h"

#include <gtest/gtest.h>

namespace kdesched::policy {
namespace {

struct MatchCase {
  const char* name;
  const char* schedule;
  LocalMinute at;
  bool matches;
};

// 2026-12-07 is a Monday (day-of-week 1); 2026-12-06 a Sunday.
const MatchCase kMatches[] = {
    {.name = "star matches all", .schedule = "* * * * *", .at = {17, 3, 7, 12, 1}, .matches = true},
    {.name = "plain minute", .schedule = "30 2 * * *", .at = {30, 2, 7, 12, 1}, .matches = true},
    {.name = "plain minute, other minute", .schedule = "30 2 * * *", .at = {31, 2, 7, 12, 1}, .matches = false},
    {.name = "list hits second item", .schedule = "0 8,12,18 * * *", .at = {0, 12, 7, 12, 1}, .matches = true},
    {.name = "list misses", .schedule = "0 8,12,18 * * *", .at = {0, 13, 7, 12, 1}, .matches = false},
    {.name = "range inclusive end", .schedule = "0 9-17 * * *", .at = {0, 17, 7, 12, 1}, .matches = true},
    {.name = "range outside", .schedule = "0 9-17 * * *", .at = {0, 18, 7, 12, 1}, .matches = false},
    {.name = "step from star", .schedule = "*/15 * * * *", .at = {45, 3, 7, 12, 1}, .matches = true},
    {.name = "step from star misses", .schedule = "*/15 * * * *", .at = {50, 3, 7, 12, 1}, .matches = false},
    {.name = "step over range", .schedule = "10-30/10 * * * *", .at = {20, 3, 7, 12, 1}, .matches = true},
    {.name = "step over range past end", .schedule = "10-30/10 * * * *", .at = {40, 3, 7, 12, 1}, .matches = false},
    {.name = "n/step runs to the end", .schedule = "5/20 * * * *", .at = {45, 3, 7, 12, 1}, .matches = true},
    {.name = "list of ranges and steps", .schedule = "0 1-3,20-23/2 * * *", .at = {0, 22, 7, 12, 1}, .matches = true},
    {.name = "weekday range", .schedule = "0 8 * * 1-5", .at = {0, 8, 7, 12, 1}, .matches = true},
    {.name = "weekday range on Sunday", .schedule = "0 8 * * 1-5", .at = {0, 8, 6, 12, 0}, .matches = false},
    {.name = "7 is Sunday", .schedule = "0 8 * * 7", .at = {0, 8, 6, 12, 0}, .matches = true},
    {.name = "month", .schedule = "0 0 1 12 *", .at = {0, 0, 1, 12, 2}, .matches = true},
    {.name = "month misses", .schedule = "0 0 1 12 *", .at = {0, 0, 1, 11, 0}, .matches = false},
    // Both day fields restricted: either one matching is enough (cron's OR rule).
    {.name = "dom or dow: dom matches", .schedule = "0 0 13 * 5", .at = {0, 0, 13, 12, 0}, .matches = true},
    {.name = "dom or dow: dow matches", .schedule = "0 0 13 * 5", .at = {0, 0, 11, 12, 5}, .matches = true},
    {.name = "dom or dow: neither", .schedule = "0 0 13 * 5", .at = {0, 0, 12, 12, 4}, .matches = false},
    // Only one restricted: that one must match (AND with the star).
    {.name = "dom only", .schedule = "0 0 13 * *", .at = {0, 0, 11, 12, 5}, .matches = false},
    {.name = "dow only", .schedule = "0 0 * * 5", .at = {0, 0, 13, 12, 0}, .matches = false},
    // A step on `*` counts as unrestricted, as in Vixie cron: then both must match.
    {.name = "dow star-step is unrestricted", .schedule = "0 0 13 * */2", .at = {0, 0, 11, 12, 2}, .matches = false},
};

TEST(CronSchedule, Matches) {
  for (const MatchCase& c : kMatches) {
    auto s = CronSchedule::parse(c.schedule);
    ASSERT_TRUE(s.isOk()) << c.name << ": " << s.error();
    EXPECT_EQ(s->matches(c.at), c.matches) << c.name;
  }
}

struct ErrorCase {
  const char* schedule;
  const char* error;
};

const ErrorCase kErrors[] = {
    {"61 * * * *", "minute field \"61\" out of range 0-59"},
    {"* 24 * * *", "hour field \"24\" out of range 0-23"},
    {"* * 0 * *", "day-of-month field \"0\" out of range 1-31"},
    {"* * * 13 *", "month field \"13\" out of range 1-12"},
    {"* * * * 8", "day-of-week field \"8\" out of range 0-7"},
    {"1,2,x * * * *", "minute field \"x\" is not a number, a range, a list or a step"},
    {"*/0 * * * *", "minute field \"*/0\" has a step that is not a positive number"},
    {"* 17-9 * * *", "hour field \"17-9\" is a range that ends before it starts"},
    {"* * * *", "must have 5 fields (minute hour day-of-month month day-of-week), got 4"},
    {"@daily", "must have 5 fields (minute hour day-of-month month day-of-week), got 1"},
    {"1,,2 * * * *", "minute field \"\" is not a number, a range, a list or a step"},
    {"* * * JAN *", "month field \"JAN\" is not a number, a range, a list or a step"},
};

TEST(CronSchedule, ErrorsNameTheFieldAndTheBadPart) {
  for (const ErrorCase& c : kErrors) {
    auto s = CronSchedule::parse(c.schedule);
    ASSERT_FALSE(s.isOk()) << c.schedule;
    EXPECT_EQ(s.error(), c.error) << c.schedule;
  }
}

}  // namespace
}  // namespace kdesched::policy
