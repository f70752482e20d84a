#include "pkg/policy/budgets.h"

#include <date/tz.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace kdesched::policy {
namespace {

using Minutes = std::chrono::sys_time<std::chrono::minutes>;

// A window longer than this is refused: the look-back walks the minutes of one duration.
constexpr double kMaxDurationSeconds = 31 * 24 * 3600;

const date::time_zone* zoneOf(const std::string& name) {
  try {
    return date::locate_zone(name);
  } catch (const std::exception&) {
    return nullptr;
  }
}

LocalMinute brokenDown(date::local_time<std::chrono::minutes> t) {
  const auto day = date::floor<date::days>(t);
  const date::year_month_day ymd{day};
  const date::hh_mm_ss<std::chrono::minutes> hms{t - day};
  return {.minute = static_cast<int>(hms.minutes().count()),
          .hour = static_cast<int>(hms.hours().count()),
          .dayOfMonth = static_cast<int>(static_cast<unsigned>(ymd.day())),
          .month = static_cast<int>(static_cast<unsigned>(ymd.month())),
          .dayOfWeek = static_cast<int>(date::weekday{day}.c_encoding())};
}

// Whether the schedule ticks at UTC minute `m` in `zone`: its local minute matches and is that
// local minute's first occurrence (fall back), or `m` ends a skipped stretch (spring forward) in
// which a local minute matches.
bool ticksAt(const CronSchedule& c, const date::time_zone& zone, Minutes m) {
  const auto local = date::floor<std::chrono::minutes>(zone.to_local(m));
  const auto before = date::floor<std::chrono::minutes>(zone.to_local(m - std::chrono::minutes(1)));
  for (auto skipped = before + std::chrono::minutes(1); skipped < local; skipped += std::chrono::minutes(1))
    if (c.matches(brokenDown(skipped))) return true;
  if (!c.matches(brokenDown(local))) return false;
  return date::floor<std::chrono::minutes>(zone.to_sys(local, date::choose::earliest)) == m;
}

// A count, or a percentage string such as "10%": into `value` and `percent`.
Status readCountOrPercent(ArgsReader& r, std::string_view key, std::uint32_t& value, bool& percent) {
  static const std::string kWant = "must be a count (such as 5) or a percentage string (such as \"10%\")";
  std::optional<std::int64_t> count;
  if (Status s = r.readInt64(key, count); s.isOk()) {
    if (*count < 0 || *count > 1000000) return r.error(key, kWant + ", from 0 to 1000000");
    value = static_cast<std::uint32_t>(*count);
    return Status::ok();
  }
  std::optional<std::string> text;
  if (Status s = r.readString(key, text); !s.isOk()) return r.error(key, kWant);
  const std::string& t = *text;
  if (t.size() < 2 || t.back() != '%' ||
      !std::all_of(t.begin(), t.end() - 1, [](char ch) { return ch >= '0' && ch <= '9'; }) || t.size() > 5)
    return r.error(key, kWant + ", got \"" + t + "\"");
  value = static_cast<std::uint32_t>(std::stoul(t.substr(0, t.size() - 1)));
  if (value > 100) return r.error(key, "a percentage must be from 0% to 100%, got \"" + t + "\"");
  percent = true;
  return Status::ok();
}

// maxEvictions is required unless a per-owner field is set: a budget must limit something.
Status readLimits(ArgsReader& r, Budget& b) {
  if (r.has("maxUnavailablePerOwner")) {
    std::uint32_t v = 0;
    KD_TRY(readCountOrPercent(r, "maxUnavailablePerOwner", v, b.unavailablePercent));
    b.maxUnavailablePerOwner = v;
  }
  KD_TRY(r.readDuration("minIntervalPerOwner", b.minIntervalPerOwnerSeconds));
  if (b.minIntervalPerOwnerSeconds &&
      (*b.minIntervalPerOwnerSeconds <= 0 || *b.minIntervalPerOwnerSeconds > kMaxDurationSeconds))
    return r.error("minIntervalPerOwner", "must be positive and at most 744h (31 days)");
  if (!r.has("maxEvictions")) {
    if (b.paces()) {
      b.capsEvictions = false;
      return Status::ok();
    }
    return r.error("maxEvictions",
                   "is required (0 for a freeze) unless the budget sets maxUnavailablePerOwner or minIntervalPerOwner");
  }
  return readCountOrPercent(r, "maxEvictions", b.maxEvictions, b.percent);
}

Status readSchedule(ArgsReader& r, Budget& b) {
  std::optional<std::string> schedule, zone;
  KD_TRY(r.readString("schedule", schedule));
  KD_TRY(r.readString("timeZone", zone));
  std::optional<double> duration;
  KD_TRY(r.readDuration("duration", duration));
  if (zone) {
    if (!zoneOf(*zone))
      return r.error("timeZone", "unknown time zone \"" + *zone +
                                     "\" (an IANA name such as Europe/Berlin, from the tz database in "
                                     "/usr/share/zoneinfo: Debian package tzdata)");
    b.timeZone = *zone;
  }
  if (!schedule) {
    if (duration) return r.error("duration", "needs a schedule (without one, a budget is always active)");
    return Status::ok();
  }
  if (!zone && !zoneOf(b.timeZone))
    return r.error("timeZone", "the tz database is missing (/usr/share/zoneinfo: Debian package tzdata)");
  Result<CronSchedule> parsed = CronSchedule::parse(*schedule);
  if (!parsed) return r.error("schedule", parsed.status().message());
  b.schedule = std::move(*parsed);
  if (!duration) return r.error("duration", "is required with a schedule (how long each tick's window lasts, e.g. 8h)");
  if (*duration <= 0 || *duration > kMaxDurationSeconds)
    return r.error("duration", "must be positive and at most 744h (31 days)");
  b.durationSeconds = *duration;
  return Status::ok();
}

Status readScope(ArgsReader& r, Budget& b) {
  return r.readObject("scope", [&](ArgsReader& s) -> Status {
    std::optional<std::vector<std::string>> plugins;
    KD_TRY(s.readStringList("plugins", plugins));
    if (plugins) b.scope.plugins = std::move(*plugins);
    KD_TRY(s.readNamespaces("namespaces", b.scope.namespaces));
    KD_TRY(s.readLabelSelector("labelSelector", b.scope.labelSelector));
    return s.finish();
  });
}

}  // namespace

bool BudgetScope::selectsPod(std::string_view ns, const api::Labels& labels) const {
  if (namespaces && !namespaces->allows(ns)) return false;
  return !labelSelector || labelSelector->matches(labels);
}

bool BudgetScope::selectsPlugin(std::string_view plugin) const {
  return plugins.empty() || std::find(plugins.begin(), plugins.end(), plugin) != plugins.end();
}

std::uint32_t Budget::allowance(std::size_t podsInScope) const {
  if (!percent) return maxEvictions;
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(podsInScope) * maxEvictions / 100);
}

std::uint32_t Budget::unavailableAllowance(std::size_t ownerPods) const {
  const std::uint32_t v = maxUnavailablePerOwner.value_or(0);
  if (!unavailablePercent) return v;
  if (v == 0) return 0;
  const auto down = static_cast<std::uint32_t>(static_cast<std::uint64_t>(ownerPods) * v / 100);
  return std::max<std::uint32_t>(down, 1);
}

std::optional<BudgetWindow> activeWindow(const Budget& b, Clock::WallTime now) {
  if (!b.schedule) return std::nullopt;
  const date::time_zone* zone = zoneOf(b.timeZone);
  if (!zone) return std::nullopt;  // checked when decoded
  const auto duration = std::chrono::duration_cast<Clock::WallTime::duration>(seconds(b.durationSeconds));
  const Clock::WallTime earliest = now - duration;
  for (Minutes m = date::floor<std::chrono::minutes>(now); m > earliest; m -= std::chrono::minutes(1))
    if (ticksAt(*b.schedule, *zone, m)) return BudgetWindow{m, m + duration};
  return std::nullopt;
}

std::string formatInZone(const Budget& b, Clock::WallTime t) {
  const date::time_zone* zone = zoneOf(b.timeZone);
  const auto secs = date::floor<std::chrono::seconds>(t);
  if (!zone) return date::format("%FT%TZ", secs);
  return date::format("%FT%T%Ez", date::make_zoned(zone, secs));
}

Status readBudgets(ArgsReader& top, std::vector<Budget>& out) {
  std::set<std::string> names;
  return top.readObjectList("budgets", [&](ArgsReader& r, std::size_t) -> Status {
    // A misspelt key first, with its did-you-mean: it would otherwise surface as a required
    // field missing.
    ArgsReader probe = r;
    RawArgs ignored;
    for (const char* key : {"name", "schedule", "timeZone", "duration", "maxEvictions", "maxUnavailablePerOwner",
                            "minIntervalPerOwner", "scope"})
      KD_TRY(probe.readRaw(key, ignored));
    KD_TRY(probe.finish());
    Budget b;
    std::optional<std::string> name;
    KD_TRY(r.readString("name", name));
    if (!name || name->empty()) return r.error("name", "is required (it names the budget in refusals and metrics)");
    if (!names.insert(*name).second) return r.error("name", "\"" + *name + "\" names two budgets");
    b.name = *name;
    KD_TRY(readSchedule(r, b));
    KD_TRY(readLimits(r, b));
    KD_TRY(readScope(r, b));
    KD_TRY(r.finish());
    out.push_back(std::move(b));
    return Status::ok();
  });
}

}  // namespace kdesched::policy
