#include "pkg/policy/cron.h"

#include <charconv>
#include <vector>

namespace kdesched::policy {
namespace {

struct FieldSpec {
  const char* name;
  int min;
  int max;
};

constexpr FieldSpec kFields[5] = {
    {"minute", 0, 59}, {"hour", 0, 23}, {"day-of-month", 1, 31}, {"month", 1, 12}, {"day-of-week", 0, 7}};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string fieldError(const FieldSpec& f, std::string_view part, const std::string& what) {
  return std::string(f.name) + " field \"" + std::string(part) + "\" " + what;
}

// A whole decimal number, or an error naming `part`.
Result<int> number(const FieldSpec& f, std::string_view text, std::string_view part) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return Status::error(fieldError(f, part, "is not a number, a range, a list or a step"));
  if (v < f.min || v > f.max)
    return Status::error(fieldError(f, part, "out of range " + std::to_string(f.min) + "-" + std::to_string(f.max)));
  return v;
}

// One element of a list: `*`, `n`, `a-b`, each optionally `/step`. Sets bits [min, max] of `out`.
Status element(const FieldSpec& f, std::string_view part, std::vector<bool>& out) {
  std::string_view range = part;
  int step = 1;
  if (auto slash = part.find('/'); slash != std::string_view::npos) {
    range = part.substr(0, slash);
    std::string_view s = part.substr(slash + 1);
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), step);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || step < 1)
      return Status::error(fieldError(f, part, "has a step that is not a positive number"));
  }
  int lo = f.min, hi = f.max;
  if (range != "*") {
    auto dash = range.find('-');
    Result<int> a = number(f, range.substr(0, dash), part);
    if (!a) return a.status();
    lo = hi = *a;
    if (dash != std::string_view::npos) {
      Result<int> b = number(f, range.substr(dash + 1), part);
      if (!b) return b.status();
      hi = *b;
      if (hi < lo) return Status::error(fieldError(f, part, "is a range that ends before it starts"));
    } else if (part.find('/') != std::string_view::npos) {
      hi = f.max;  // `n/step`: from n to the field's end, as cron reads it
    }
  }
  for (int v = lo; v <= hi; v += step) out[static_cast<std::size_t>(v)] = true;
  return Status::ok();
}

Status field(const FieldSpec& f, std::string_view text, std::vector<bool>& out) {
  out.assign(static_cast<std::size_t>(f.max) + 1, false);
  for (std::string_view part : split(text, ','))
    if (Status s = element(f, part, out); !s.isOk()) return s;
  return Status::ok();
}

template <std::size_t N>
void copyBits(const std::vector<bool>& from, std::bitset<N>& to) {
  for (std::size_t i = 0; i < from.size() && i < N; ++i) to[i] = from[i];
}

}  // namespace

Result<CronSchedule> CronSchedule::parse(std::string_view text) {
  const std::vector<std::string_view> w = words(text);
  if (w.size() != 5)
    return Status::error("must have 5 fields (minute hour day-of-month month day-of-week), got " +
                         std::to_string(w.size()));
  CronSchedule c;
  c.text_ = std::string(text);
  std::vector<bool> bits[5];
  for (std::size_t i = 0; i < 5; ++i)
    if (Status s = field(kFields[i], w[i], bits[i]); !s.isOk()) return s;
  copyBits(bits[0], c.minutes_);
  copyBits(bits[1], c.hours_);
  copyBits(bits[2], c.daysOfMonth_);
  copyBits(bits[3], c.months_);
  copyBits(bits[4], c.daysOfWeek_);
  if (bits[4][7]) c.daysOfWeek_[0] = true;
  c.domRestricted_ = w[2].front() != '*';
  c.dowRestricted_ = w[4].front() != '*';
  return c;
}

bool CronSchedule::matches(const LocalMinute& m) const {
  if (!minutes_[static_cast<std::size_t>(m.minute)] || !hours_[static_cast<std::size_t>(m.hour)] ||
      !months_[static_cast<std::size_t>(m.month)])
    return false;
  const bool dom = daysOfMonth_[static_cast<std::size_t>(m.dayOfMonth)];
  const bool dow = daysOfWeek_[static_cast<std::size_t>(m.dayOfWeek)];
  if (domRestricted_ && dowRestricted_) return dom || dow;
  return dom && dow;
}

}  // namespace kdesched::policy
