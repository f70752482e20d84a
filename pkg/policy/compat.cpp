#include "pkg/policy/compat.h"

#include <optional>
#include <string>

#include "pkg/policy/args.h"

namespace kdesched::policy {
namespace {

constexpr const char* kModes = "must be upstream or kdesched";

// Each switch with its field, in one table so names() and field() cannot disagree.
struct Entry {
  std::string_view name;
  bool Compat::*member;
};
constexpr Entry kEntries[] = {
    {"terminatingNotViolator", &Compat::terminatingNotViolator},
    {"terminatingNotCandidate", &Compat::terminatingNotCandidate},
    {"namespaceSelectorHonoured", &Compat::namespaceSelectorHonoured},
    {"matchLabelKeysHonoured", &Compat::matchLabelKeysHonoured},
    {"podIdentityNotName", &Compat::podIdentityNotName},
    {"antiAffinityBothWays", &Compat::antiAffinityBothWays},
    {"zeroRequestSkipsResource", &Compat::zeroRequestSkipsResource},
    {"evictedEarlierNotCounted", &Compat::evictedEarlierGone},
    {"cumulativeFit", &Compat::cumulativeFit},
    {"minDomainsHonoured", &Compat::minDomainsHonoured},
    {"otherConstraintsRespected", &Compat::otherConstraintsRespected},
    {"movesSharedAcrossConstraints", &Compat::movesSharedAcrossConstraints},
    {"unreadyPodNeedsBudget", &Compat::unreadyPodNeedsBudget},
    {"podsWithoutPDBProtection", &Compat::podsWithoutPDBProtection},
    {"usageGapLeavesNodeOut", &Compat::usageGapLeavesNodeOut},
};

// kdesched → true, upstream → false.
std::optional<bool> parseMode(const std::string& mode) {
  if (mode == "kdesched") return true;
  if (mode == "upstream") return false;
  return std::nullopt;
}

}  // namespace

Compat Compat::upstream() {
  Compat c;
  for (const Entry& e : kEntries) c.*e.member = false;
  return c;
}

const std::vector<std::string_view>& Compat::names() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> out;
    for (const Entry& e : kEntries) out.push_back(e.name);
    return out;
  }();
  return kNames;
}

bool* Compat::field(std::string_view name) {
  for (const Entry& e : kEntries)
    if (e.name == name) return &(this->*e.member);
  return nullptr;
}

Status readCompat(ArgsReader& block, Compat& out) {
  RawArgs raw;
  if (Status s = block.readRaw("compat", raw); !s.isOk()) return s;
  if (!raw.isSet()) return Status::ok();
  std::optional<std::string> mode;
  if (block.readString("compat", mode).isOk() && mode) {
    std::optional<bool> kd = parseMode(*mode);
    if (!kd)
      return block.error("compat", std::string(kModes) + " (or a mapping of switch names), got \"" + *mode + "\"");
    out = *kd ? Compat{} : Compat::upstream();
    return Status::ok();
  }
  ArgsReader r(raw);
  if (!r.structural().isOk())
    return block.error("compat", "must be upstream, kdesched, or a mapping {<switch>: upstream|kdesched}");
  for (const Entry& e : kEntries) {
    std::optional<std::string> v;
    if (Status s = r.readString(e.name, v); !s.isOk()) return s;
    if (!v) continue;
    std::optional<bool> kd = parseMode(*v);
    if (!kd) return r.error(e.name, std::string(kModes) + ", got \"" + *v + "\"");
    out.*e.member = *kd;
  }
  return r.finish();
}

}  // namespace kdesched::policy
