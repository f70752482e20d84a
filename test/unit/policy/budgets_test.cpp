#include "pkg/policy/budgets.h"

#include <gtest/gtest.h>

#include <set>

#include "pkg/api/timestamp.h"
#include "pkg/policy/extension.h"

namespace kdesched::policy {
namespace {

Clock::WallTime at(const char* rfc3339) {
  return Clock::WallTime{} + std::chrono::seconds(api::parseTimestamp(rfc3339).value());
}

Budget scheduled(const char* cron, const char* zone, double durationSeconds) {
  Budget b;
  b.name = "b";
  b.schedule = CronSchedule::parse(cron).value();
  b.timeZone = zone;
  b.durationSeconds = durationSeconds;
  return b;
}

struct WindowCase {
  const char* name;
  const char* schedule;
  const char* zone;
  double duration;
  const char* now;
  const char* start;  // nullptr: no window open
  const char* end;
};

const WindowCase kWindows[] = {
    {.name = "inside a window",
     .schedule = "0 8 * * *",
     .zone = "UTC",
     .duration = 3600,
     .now = "2026-12-07T08:30:00Z",
     .start = "2026-12-07T08:00:00Z",
     .end = "2026-12-07T09:00:00Z"},
    {.name = "the tick's own second opens it",
     .schedule = "0 8 * * *",
     .zone = "UTC",
     .duration = 3600,
     .now = "2026-12-07T08:00:00Z",
     .start = "2026-12-07T08:00:00Z",
     .end = "2026-12-07T09:00:00Z"},
    {.name = "the end is exclusive",
     .schedule = "0 8 * * *",
     .zone = "UTC",
     .duration = 3600,
     .now = "2026-12-07T09:00:00Z",
     .start = nullptr,
     .end = nullptr},
    {.name = "before the tick",
     .schedule = "0 8 * * *",
     .zone = "UTC",
     .duration = 3600,
     .now = "2026-12-07T07:59:59Z",
     .start = nullptr,
     .end = nullptr},
    // A freeze from 22:00 for 4h is still on at 01:00 the next day: the look-back crosses midnight.
    {.name = "freeze spanning midnight",
     .schedule = "0 22 * * *",
     .zone = "UTC",
     .duration = 4 * 3600,
     .now = "2026-12-08T01:00:00Z",
     .start = "2026-12-07T22:00:00Z",
     .end = "2026-12-08T02:00:00Z"},
    {.name = "freeze spanning midnight, over",
     .schedule = "0 22 * * *",
     .zone = "UTC",
     .duration = 4 * 3600,
     .now = "2026-12-08T02:00:30Z",
     .start = nullptr,
     .end = nullptr},
    {.name = "Berlin in winter is UTC+1",
     .schedule = "0 8 * * 1-5",
     .zone = "Europe/Berlin",
     .duration = 10 * 3600,
     .now = "2026-12-07T12:00:00Z",
     .start = "2026-12-07T07:00:00Z",
     .end = "2026-12-07T17:00:00Z"},
    {.name = "Berlin weekday schedule on a Sunday",
     .schedule = "0 8 * * 1-5",
     .zone = "Europe/Berlin",
     .duration = 10 * 3600,
     .now = "2026-12-06T12:00:00Z",
     .start = nullptr,
     .end = nullptr},
    // 2026-03-29: Berlin skips 02:00-03:00 (01:00Z). A 02:30 tick fires when the skip happens.
    {.name = "spring forward: a skipped 02:30 ticks at the skip",
     .schedule = "30 2 * * *",
     .zone = "Europe/Berlin",
     .duration = 3600,
     .now = "2026-03-29T01:20:00Z",
     .start = "2026-03-29T01:00:00Z",
     .end = "2026-03-29T02:00:00Z"},
    {.name = "spring forward: the day before, 02:30 CET",
     .schedule = "30 2 * * *",
     .zone = "Europe/Berlin",
     .duration = 3600,
     .now = "2026-03-28T01:45:00Z",
     .start = "2026-03-28T01:30:00Z",
     .end = "2026-03-28T02:30:00Z"},
    // 2026-10-25: Berlin repeats 02:00-03:00 (00:00Z-01:00Z CEST, 01:00Z-02:00Z CET). 02:30 ticks
    // the first time only.
    {.name = "fall back: the first 02:30 (CEST) ticks",
     .schedule = "30 2 * * *",
     .zone = "Europe/Berlin",
     .duration = 1800,
     .now = "2026-10-25T00:45:00Z",
     .start = "2026-10-25T00:30:00Z",
     .end = "2026-10-25T01:00:00Z"},
    {.name = "fall back: the second 02:30 (CET) does not",
     .schedule = "30 2 * * *",
     .zone = "Europe/Berlin",
     .duration = 1800,
     .now = "2026-10-25T01:45:00Z",
     .start = nullptr,
     .end = nullptr},
    // Overlapping ticks: the latest opens the window.
    {.name = "hourly ticks with a 3h duration: the latest tick's window",
     .schedule = "0 * * * *",
     .zone = "UTC",
     .duration = 3 * 3600,
     .now = "2026-12-07T10:10:00Z",
     .start = "2026-12-07T10:00:00Z",
     .end = "2026-12-07T13:00:00Z"},
};

TEST(BudgetWindow, ActiveWindowTable) {
  for (const WindowCase& c : kWindows) {
    const Budget b = scheduled(c.schedule, c.zone, c.duration);
    const auto w = activeWindow(b, at(c.now));
    if (!c.start) {
      EXPECT_FALSE(w.has_value()) << c.name;
      continue;
    }
    ASSERT_TRUE(w.has_value()) << c.name;
    EXPECT_EQ(w->start, at(c.start)) << c.name;
    EXPECT_EQ(w->end, at(c.end)) << c.name;
  }
}

// Every tick of one UTC day, found by asking minute by minute with a one-minute window.
std::vector<Clock::WallTime> ticksOn(const char* cron, const char* zone, const char* dayStart) {
  const Budget b = scheduled(cron, zone, 60);
  std::set<Clock::WallTime> starts;
  for (int m = 0; m < 24 * 60; ++m)
    if (auto w = activeWindow(b, at(dayStart) + std::chrono::minutes(m))) starts.insert(w->start);
  return {starts.begin(), starts.end()};
}

TEST(BudgetWindow, ADailyTickFiresOnceOnEachDstDay) {
  EXPECT_EQ(ticksOn("30 2 * * *", "Europe/Berlin", "2026-03-29T00:00:00Z"),
            std::vector<Clock::WallTime>{at("2026-03-29T01:00:00Z")});
  EXPECT_EQ(ticksOn("30 2 * * *", "Europe/Berlin", "2026-10-25T00:00:00Z"),
            std::vector<Clock::WallTime>{at("2026-10-25T00:30:00Z")});
  EXPECT_EQ(ticksOn("30 2 * * *", "Europe/Berlin", "2026-10-26T00:00:00Z"),
            std::vector<Clock::WallTime>{at("2026-10-26T01:30:00Z")});
  // A tick outside the changed hour is not moved or doubled.
  EXPECT_EQ(ticksOn("0 4 * * *", "Europe/Berlin", "2026-10-25T00:00:00Z"),
            std::vector<Clock::WallTime>{at("2026-10-25T03:00:00Z")});
}

TEST(BudgetWindow, FormatsInTheBudgetsZone) {
  EXPECT_EQ(formatInZone(scheduled("* * * * *", "Europe/Berlin", 60), at("2026-12-07T17:00:00Z")),
            "2026-12-07T18:00:00+01:00");
  EXPECT_EQ(formatInZone(scheduled("* * * * *", "Europe/Berlin", 60), at("2026-07-07T16:00:00Z")),
            "2026-07-07T18:00:00+02:00");
  EXPECT_EQ(formatInZone(scheduled("* * * * *", "UTC", 60), at("2026-12-07T17:00:00Z")), "2026-12-07T17:00:00+00:00");
}

TEST(BudgetAllowance, PercentagesRoundDown) {
  Budget b;
  b.percent = true;
  struct Case {
    std::uint32_t percent;
    std::size_t pods;
    std::uint32_t allowance;
  };
  for (const Case& c : {Case{10, 34, 3}, Case{10, 9, 0}, Case{10, 10, 1}, Case{100, 7, 7}, Case{0, 50, 0},
                        Case{33, 3, 0}, Case{34, 3, 1}, Case{50, 0, 0}}) {
    b.maxEvictions = c.percent;
    EXPECT_EQ(b.allowance(c.pods), c.allowance) << c.percent << "% of " << c.pods;
  }
  b.percent = false;
  b.maxEvictions = 5;
  EXPECT_EQ(b.allowance(1000), 5u);
}

Result<Extension> decode(const std::string& yaml) {
  return decodeExtension(RawArgs::fromYaml(yaml, "kdesched").value());
}

TEST(BudgetDecoding, AFullBudget) {
  auto e = decode(
      "budgets:\n"
      "- name: business-hours\n"
      "  schedule: \"0 8 * * 1-5\"\n"
      "  timeZone: Europe/Berlin\n"
      "  duration: 10h\n"
      "  maxEvictions: \"10%\"\n"
      "  scope:\n"
      "    plugins: [RemovePodsViolatingInterPodAntiAffinity]\n"
      "    namespaces: {exclude: [kube-system]}\n"
      "    labelSelector: {matchLabels: {tier: web}}\n"
      "- name: always\n"
      "  maxEvictions: 2\n");
  ASSERT_TRUE(e.isOk()) << e.error();
  ASSERT_EQ(e->budgets.size(), 2u);
  const Budget& b = e->budgets[0];
  EXPECT_EQ(b.name, "business-hours");
  ASSERT_TRUE(b.schedule.has_value());
  EXPECT_EQ(b.schedule->text(), "0 8 * * 1-5");
  EXPECT_EQ(b.timeZone, "Europe/Berlin");
  EXPECT_EQ(b.durationSeconds, 36000);
  EXPECT_TRUE(b.percent);
  EXPECT_EQ(b.maxEvictions, 10u);
  EXPECT_EQ(b.scope.plugins, std::vector<std::string>{"RemovePodsViolatingInterPodAntiAffinity"});
  ASSERT_TRUE(b.scope.namespaces.has_value());
  EXPECT_FALSE(b.scope.namespaces->allows("kube-system"));
  ASSERT_TRUE(b.scope.labelSelector.has_value());
  const Budget& a = e->budgets[1];
  EXPECT_FALSE(a.schedule.has_value());
  EXPECT_EQ(a.timeZone, "UTC");
  EXPECT_FALSE(a.percent);
  EXPECT_EQ(a.maxEvictions, 2u);
}

TEST(BudgetDecoding, NoneUnlessConfigured) {
  auto e = decode("");
  ASSERT_TRUE(e.isOk());
  EXPECT_TRUE(e->budgets.empty());
}

// `compat: upstream` means upstream's behaviour: no budgets. They are still checked.
TEST(BudgetDecoding, CompatUpstreamIgnoresThem) {
  const std::string budget = "budgets: [{name: freeze, maxEvictions: 0}]\n";
  auto on = decode(budget);
  ASSERT_TRUE(on.isOk()) << on.error();
  EXPECT_EQ(on->budgets.size(), 1u);
  auto off = decode(budget + "compat: upstream\n");
  ASSERT_TRUE(off.isOk()) << off.error();
  EXPECT_TRUE(off->budgets.empty());
  auto oneSwitch = decode(budget + "compat: {cumulativeFit: upstream}\n");
  ASSERT_TRUE(oneSwitch.isOk()) << oneSwitch.error();
  EXPECT_EQ(oneSwitch->budgets.size(), 1u);
  EXPECT_FALSE(decode("budgets: [{name: freeze, maxEvictions: -1}]\ncompat: upstream\n").isOk());
}

struct ErrorCase {
  const char* yaml;
  const char* error;
};

const ErrorCase kErrors[] = {
    {"budgets: [{name: b, schedule: \"61 * * * *\", duration: 1h, maxEvictions: 0}]",
     "kdesched.budgets[0].schedule: minute field \"61\" out of range 0-59"},
    {"budgets: [{name: a, maxEvictions: 1}, {name: b, schedule: \"0 8 * * 1-8\", duration: 1h, maxEvictions: 0}]",
     "kdesched.budgets[1].schedule: day-of-week field \"1-8\" out of range 0-7"},
    {"budgets: [{name: b, maxEviction: 0}]",
     "kdesched.budgets[0].maxEviction: unknown field \"maxEviction\" (did you mean \"maxEvictions\"?)"},
    {"budgets: [{name: b, schedule: \"0 8 * * *\", duraton: 1h, maxEvictions: 0}]",
     "kdesched.budgets[0].duraton: unknown field \"duraton\" (did you mean \"duration\"?)"},
    {"budgets: [{name: b, maxEvictions: 0, scope: {plugin: [X]}}]",
     "kdesched.budgets[0].scope.plugin: unknown field \"plugin\" (did you mean \"plugins\"?)"},
    {"budgets: [{name: b, schedule: \"0 8 * * *\", timeZone: Europe/Berlinn, duration: 1h, maxEvictions: 0}]",
     "kdesched.budgets[0].timeZone: unknown time zone \"Europe/Berlinn\""},
    {"budgets: [{name: b, schedule: \"0 8 * * *\", maxEvictions: 0}]",
     "kdesched.budgets[0].duration: is required with a schedule"},
    {"budgets: [{name: b, duration: 1h, maxEvictions: 0}]", "kdesched.budgets[0].duration: needs a schedule"},
    {"budgets: [{name: b, schedule: \"0 8 * * *\", duration: 0s, maxEvictions: 0}]",
     "kdesched.budgets[0].duration: must be positive"},
    {"budgets: [{name: b}]", "kdesched.budgets[0].maxEvictions: is required (0 for a freeze)"},
    {"budgets: [{name: b, maxEvictions: -1}]", "kdesched.budgets[0].maxEvictions: must be a count"},
    {"budgets: [{name: b, maxEvictions: \"10\"}]", "kdesched.budgets[0].maxEvictions: must be a count"},
    {"budgets: [{name: b, maxEvictions: \"150%\"}]",
     "kdesched.budgets[0].maxEvictions: a percentage must be from 0% to 100%, got \"150%\""},
    {"budgets: [{maxEvictions: 0}]", "kdesched.budgets[0].name: is required"},
    {"budgets: [{name: b, maxEvictions: 0}, {name: b, maxEvictions: 1}]",
     "kdesched.budgets[1].name: \"b\" names two budgets"},
    {"budget: []", "kdesched.budget: unknown field \"budget\" (did you mean \"budgets\"?)"},
};

TEST(BudgetDecoding, ErrorsNameTheFieldPath) {
  for (const ErrorCase& c : kErrors) {
    auto e = decode(c.yaml);
    ASSERT_FALSE(e.isOk()) << c.yaml;
    EXPECT_EQ(e.error().rfind(c.error, 0), 0u) << c.yaml << "\n  got: " << e.error();
  }
}

}  // namespace
}  // namespace kdesched::policy
