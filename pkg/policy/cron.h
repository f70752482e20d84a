// A cron schedule's five fields (minute hour day-of-month month day-of-week), as crontab(5) and
// Kubernetes CronJobs write them: `*`, numbers, ranges `a-b`, lists `a,b`, steps `*/n` and `a-b/n`.
// Day-of-week is 0-6 from Sunday (7 is Sunday too). When both day fields are restricted (neither
// starts with `*`), a day matches if EITHER does, as in cron; otherwise both must.
// No C++ cron library is packaged in Debian 12, hence this small parser.
#pragma once

#include <bitset>
#include <string>
#include <string_view>

#include "pkg/base/status.h"

namespace kdesched::policy {

// One local (wall-clock) minute of a time zone, broken down as cron reads it.
struct LocalMinute {
  int minute = 0;      // 0-59
  int hour = 0;        // 0-23
  int dayOfMonth = 1;  // 1-31
  int month = 1;       // 1-12
  int dayOfWeek = 0;   // 0-6, Sunday 0
};

class CronSchedule {
 public:
  // Parses the five fields. Errors name the field and the bad part:
  // `minute field "61" out of range 0-59`.
  static Result<CronSchedule> parse(std::string_view text);

  bool matches(const LocalMinute& m) const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> daysOfMonth_;  // bit 0 unused
  std::bitset<13> months_;       // bit 0 unused
  std::bitset<8> daysOfWeek_;    // 7 folded onto 0
  bool domRestricted_ = false;
  bool dowRestricted_ = false;
};

}  // namespace kdesched::policy
