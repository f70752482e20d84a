#include "pkg/plugins/removepodsviolatingnodetaints/args.h"

#include <algorithm>

namespace kdesched::plugins::removepodsviolatingnodetaints {
namespace {

// A list entry names the taint by its key, or by `key=value` when the taint has a value.
bool listed(const std::vector<std::string>& list, const api::Taint& taint) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& entry) {
    if (entry == taint.key) return true;
    return !taint.value.empty() && entry.size() == taint.key.size() + 1 + taint.value.size() &&
           entry.compare(0, taint.key.size(), taint.key) == 0 && entry[taint.key.size()] == '=' &&
           entry.compare(taint.key.size() + 1, std::string::npos, taint.value) == 0;
  });
}

}  // namespace

bool Args::considers(const api::Taint& taint) const {
  bool effect = taint.effect == api::TaintEffect::NoSchedule ||
                (includePreferNoSchedule && taint.effect == api::TaintEffect::PreferNoSchedule);
  if (!effect || listed(excludedTaints, taint)) return false;
  return !includedTaints || listed(*includedTaints, taint);
}

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  KD_TRY(readPodListFilter(r, a.filter));
  std::optional<bool> preferNoSchedule;
  KD_TRY(r.readBool("includePreferNoSchedule", preferNoSchedule));
  a.includePreferNoSchedule = preferNoSchedule.value_or(false);
  std::optional<std::vector<std::string>> excluded;
  KD_TRY(r.readStringList("excludedTaints", excluded));
  a.excludedTaints = excluded.value_or(std::vector<std::string>{});
  KD_TRY(r.readStringList("includedTaints", a.includedTaints));
  KD_TRY(r.finish());
  // Upstream compares lengths, so `includedTaints: []` next to excludedTaints is accepted.
  if (!a.excludedTaints.empty() && a.includedTaints && !a.includedTaints->empty())
    return r.error("includedTaints", "either includedTaints or excludedTaints can be set, but not both");
  return a;
}

}  // namespace kdesched::plugins::removepodsviolatingnodetaints
