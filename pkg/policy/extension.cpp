#include "pkg/policy/extension.h"

#include <fmt/format.h>

#include "pkg/policy/args.h"

namespace kdesched::policy {
namespace {

Status seconds(ArgsReader& r, const char* key, double& out, bool allowZero = true) {
  std::optional<double> v;
  if (Status s = r.readDuration(key, v); !s.isOk()) return s;
  if (!v) return Status::ok();
  if (*v < 0 || (!allowZero && *v == 0))
    return r.error(key, std::string("must be ") + (allowZero ? "zero or positive" : "positive"));
  out = *v;
  return Status::ok();
}

Status readMoves(ArgsReader& top, MovesConfig& m) {
  return top.readObject("moves", [&](ArgsReader& r) -> Status {
    std::optional<bool> enabled;
    if (Status s = r.readBool("enabled", enabled); !s.isOk()) return s;
    m.enabled = enabled.value_or(false);
    std::optional<std::int32_t> maxReplicas;
    if (Status s = r.readInt32("maxReplicas", maxReplicas); !s.isOk()) return s;
    if (maxReplicas) {
      if (*maxReplicas < 1) return r.error("maxReplicas", "must be at least 1, got " + std::to_string(*maxReplicas));
      m.maxReplicas = *maxReplicas;
    }
    if (Status s = r.readNamespaces("namespaces", m.namespaces); !s.isOk()) return s;
    if (Status s = r.readLabelSelector("labelSelector", m.labelSelector); !s.isOk()) return s;
    if (Status s = seconds(r, "deadline", m.deadlineSeconds); !s.isOk()) return s;
    return r.finish();
  });
}

// Whole seconds, at least one, at most a month (744h): a lifetime's jitter beyond that is a typo.
Status readPodLifeTime(ArgsReader& top, PodLifeTimeConfig& c) {
  return top.readObject("podLifeTime", [&](ArgsReader& r) -> Status {
    std::optional<double> jitter;
    if (Status s = r.readDuration("jitter", jitter); !s.isOk()) return s;
    if (jitter) {
      if (*jitter != 0 && (*jitter < 1 || *jitter > 744 * 3600))
        return r.error("jitter", "must be 0s (off) or from 1s to 744h, got " + fmt::format("{}s", *jitter));
      c.jitterSeconds = static_cast<std::uint64_t>(*jitter);
    }
    return r.finish();
  });
}

}  // namespace

Result<Extension> decodeExtension(const RawArgs& raw) {
  Extension e;
  ArgsReader top(raw);
  if (!top.structural().isOk()) return top.structural();
  Status st = top.readObject("triggers", [&](ArgsReader& r) -> Status {
    std::optional<bool> enabled;
    if (Status s = r.readBool("enabled", enabled); !s.isOk()) return s;
    if (enabled) e.triggers.enabled = *enabled;
    if (Status s = seconds(r, "debounce", e.triggers.debounceSeconds, false); !s.isOk()) return s;
    if (Status s = seconds(r, "quiet", e.triggers.quietSeconds, false); !s.isOk()) return s;
    if (e.triggers.quietSeconds > e.triggers.debounceSeconds) return r.error("quiet", "must not exceed debounce");
    std::optional<double> share;
    if (Status s = r.readDouble("cpuShare", share); !s.isOk()) return s;
    if (share) {
      if (!(*share > 0 && *share <= 1))
        return r.error("cpuShare",
                       "must be above 0 and at most 1 (a share of one core), got " + fmt::format("{}", *share));
      e.triggers.cpuShare = *share;
    }
    if (Status s = seconds(r, "balanceDebounce", e.triggers.balanceDebounceSeconds, false); !s.isOk()) return s;
    if (Status s = seconds(r, "rolloutGrace", e.triggers.rolloutGraceSeconds); !s.isOk()) return s;
    return r.finish();
  });
  if (!st.isOk()) return st;
  st = top.readObject("antiFlapping", [&](ArgsReader& r) -> Status {
    auto& a = e.antiFlapping;
    if (Status s = seconds(r, "ownerCooldown", a.ownerCooldownSeconds); !s.isOk()) return s;
    std::optional<double> perMinute;
    if (Status s = r.readDouble("maxEvictionsPerMinute", perMinute); !s.isOk()) return s;
    if (perMinute) {
      if (*perMinute < 0) return r.error("maxEvictionsPerMinute", "must be zero (unlimited) or positive");
      a.maxEvictionsPerMinute = *perMinute;
    }
    std::optional<std::int32_t> after;
    if (Status s = r.readInt32("backoffAfter", after); !s.isOk()) return s;
    if (after) {
      if (*after < 1) return r.error("backoffAfter", "must be at least 1, got " + std::to_string(*after));
      a.backoffAfter = *after;
    }
    if (Status s = seconds(r, "backoffInitial", a.backoffInitialSeconds, false); !s.isOk()) return s;
    if (Status s = seconds(r, "backoffMax", a.backoffMaxSeconds, false); !s.isOk()) return s;
    if (a.backoffMaxSeconds < a.backoffInitialSeconds) return r.error("backoffMax", "must not be below backoffInitial");
    return r.finish();
  });
  if (!st.isOk()) return st;
  std::optional<bool> blockedEnabled;
  st = top.readObject("blockedEvents", [&](ArgsReader& r) -> Status {
    auto& b = e.blockedEvents;
    if (Status s = r.readBool("enabled", blockedEnabled); !s.isOk()) return s;
    if (Status s = seconds(r, "period", b.periodSeconds, false); !s.isOk()) return s;
    std::optional<double> perMinute;
    if (Status s = r.readDouble("perMinute", perMinute); !s.isOk()) return s;
    if (perMinute) {
      if (*perMinute < 0) return r.error("perMinute", "must be zero (no bound but the period) or positive");
      b.perMinute = *perMinute;
    }
    return r.finish();
  });
  if (!st.isOk()) return st;
  if (Status s = readMoves(top, e.moves); !s.isOk()) return s;
  if (Status s = readBudgets(top, e.budgets); !s.isOk()) return s;
  if (Status s = readPodLifeTime(top, e.podLifeTime); !s.isOk()) return s;
  if (Status s = readCompat(top, e.compat); !s.isOk()) return s;
  // Upstream has neither moves, budgets nor lifetime jitter: `compat: upstream` decides as upstream
  // does, whatever they say (they are read and checked first).
  if (e.compat == Compat::upstream()) {
    e.moves.enabled = false;
    e.budgets.clear();
    e.podLifeTime = {};
  }
  // Upstream posts no such Events: `compat: upstream` leaves them off unless asked for by name.
  e.blockedEvents.enabled = blockedEnabled.value_or(!(e.compat == Compat::upstream()));
  if (Status s = top.finish(); !s.isOk()) return s;
  return e;
}

}  // namespace kdesched::policy
