#include "pkg/plugins/defaultevictor/args.h"

#include <algorithm>

namespace kdesched::plugins::defaultevictor {
namespace {

const std::vector<std::string> kDefaultProtections = {kPodsWithLocalStorage, kSystemCriticalPods, kFailedBarePods,
                                                      kDaemonSetPods};
const std::vector<std::string> kExtraProtections = {kPodsWithPVC, kPodsWithoutPDB, kPodsWithResourceClaims};

std::string listOf(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? " " : "") + v[i];
  return out + "]";
}

Status checkList(policy::ArgsReader& r, const std::string& field, const std::vector<std::string>& values,
                 const std::vector<std::string>& valid, const std::string& upstreamName) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (std::find(valid.begin(), valid.end(), values[i]) == valid.end())
      return r.error(field + "[" + std::to_string(i) + "]", "invalid pod protection policy in " + upstreamName +
                                                                ": \"" + values[i] +
                                                                "\". Valid options are: " + listOf(valid));
    if (!seen.insert(values[i]).second)
      return r.error(field, "PodProtections." + upstreamName + " contains duplicate entries");
  }
  return Status::ok();
}

// An empty protectedStorageClasses name: upstream rejects it only when extraEnabled has PodsWithPVC.
// Without PodsWithPVC the list is unused (a warning); with the legacy ignorePvcPods it is used, and
// the empty entry, matching no class, turns "protect every pod with a PVC" into "protect the listed
// classes only": that could evict more than asked, so it stays an error.
Status checkEmptyStorageClass(const policy::ArgsReader& r, const Args& a, std::optional<std::size_t> empty,
                              policy::Warnings& warnings) {
  if (!empty) return Status::ok();
  const std::string at = "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[" + std::to_string(*empty) + "]";
  policy::ArgsReader entry(policy::RawArgs{.path = r.pathOf("podProtections") +
                                                   ".config.PodsWithPVC.protectedStorageClasses[" +
                                                   std::to_string(*empty) + "]"});
  const auto& extra = a.extraEnabled;
  if (std::find(extra.begin(), extra.end(), kPodsWithPVC) != extra.end())
    return entry.error("name", at + " name cannot be empty");
  if (a.ignorePvcPods)
    return entry.error("name", at + " name cannot be empty: with ignorePvcPods upstream accepts it, matches no " +
                                   "class with it and protects only the other listed classes, so pods with a PVC of " +
                                   "any other class become evictable");
  warnings.push_back(entry.pathOf("name") + ": empty, accepted as upstream accepts it; unused, since " + kPodsWithPVC +
                     " protection is off");
  return Status::ok();
}

}  // namespace

Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::string> s;
  std::optional<bool> b;
  std::optional<std::size_t> emptyClass;  // the first protectedStorageClasses entry without a name
  KD_TRY(r.readString("nodeSelector", s));
  std::optional<std::string> badNodeSelector;  // why nodeSelector does not parse; checked with nodeFit
  if (s) {
    a.nodeSelector = *s;
    if (auto sel = api::parseLabelSelector(*s); !sel.isOk()) badNodeSelector = sel.error();
  }
  KD_TRY(r.readLabelSelector("labelSelector", a.labelSelector));
  KD_TRY(r.readLabelSelector("namespaceLabelSelector", a.namespaceLabelSelector));
  KD_TRY(r.readObject("priorityThreshold", [&](policy::ArgsReader& pr) -> Status {
    KD_TRY(pr.readInt32("value", a.priorityThresholdValue));
    KD_TRY(pr.readString("name", a.priorityThresholdName));
    KD_TRY(pr.finish());
    // Upstream's check is `len(Name) > 0`: an empty name next to a value is no name at all.
    if (a.priorityThresholdValue && a.priorityThresholdName && a.priorityThresholdName->empty())
      a.priorityThresholdName.reset();
    if (a.priorityThresholdValue && a.priorityThresholdName)
      return Status::error(pr.path() +
                           ": priority threshold misconfigured, only one of priorityThreshold fields can be set");
    if (a.priorityThresholdValue && *a.priorityThresholdValue > api::kSystemCriticalPriority)
      return pr.error("value", "priority threshold can't be greater than 2000000000, got " +
                                   std::to_string(*a.priorityThresholdValue));
    return Status::ok();
  }));
  KD_TRY(r.readBool("nodeFit", b));
  a.nodeFit = b.value_or(false);
  // Upstream parses it only for nodeFit, then fails every PreEvictionFilter with it (evicting nothing
  // in the profile); kdesched does the same and says so at load. Without nodeFit nothing reads it.
  if (badNodeSelector)
    warnings.push_back(r.pathOf("nodeSelector") + ": " + *badNodeSelector +
                       (a.nodeFit ? "; with nodeFit every eviction of this profile is refused on it, as upstream "
                                    "refuses them"
                                  : "; accepted as upstream accepts it, and unused without nodeFit"));
  std::optional<std::uint32_t> minReplicas;
  KD_TRY(r.readUint32("minReplicas", minReplicas));
  a.minReplicas = minReplicas.value_or(0);
  KD_TRY(r.readDuration("minPodAge", a.minPodAgeSeconds));
  s.reset();
  KD_TRY(r.readString("noEvictionPolicy", s));
  // "" is upstream's unset value (its validation skips it), so it means the default here too.
  if (s && !s->empty()) {
    if (*s != "Preferred" && *s != "Mandatory")
      return r.error("noEvictionPolicy",
                     "noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] values, got \"" + *s + "\"");
    a.noEvictionPolicy = *s;
  }
  KD_TRY(r.readObject("podProtections", [&](policy::ArgsReader& pr) -> Status {
    std::optional<std::vector<std::string>> disabled, extra;
    KD_TRY(pr.readStringList("defaultDisabled", disabled));
    if (disabled) a.defaultDisabled = *disabled;
    KD_TRY(pr.readStringList("extraEnabled", extra));
    if (extra) a.extraEnabled = *extra;
    KD_TRY(checkList(pr, "defaultDisabled", a.defaultDisabled, kDefaultProtections, "DefaultDisabled"));
    KD_TRY(checkList(pr, "extraEnabled", a.extraEnabled, kExtraProtections, "ExtraEnabled"));
    KD_TRY(pr.readObject("config", [&](policy::ArgsReader& cr) -> Status {
      KD_TRY(cr.readObject("PodsWithPVC", [&](policy::ArgsReader& vr) -> Status {
        KD_TRY(vr.readObjectList("protectedStorageClasses", [&](policy::ArgsReader& sr, std::size_t i) -> Status {
          std::optional<std::string> name;
          KD_TRY(sr.readString("name", name));
          if (name.value_or("").empty() && !emptyClass) emptyClass = i;
          a.protectedStorageClasses.push_back(name.value_or(""));
          return sr.finish();
        }));
        return vr.finish();
      }));
      return cr.finish();
    }));
    return pr.finish();
  }));
  struct Legacy {
    const char* key;
    bool* field;
  };
  for (Legacy l :
       {Legacy{"evictLocalStoragePods", &a.evictLocalStoragePods}, Legacy{"evictDaemonSetPods", &a.evictDaemonSetPods},
        Legacy{"evictSystemCriticalPods", &a.evictSystemCriticalPods},
        Legacy{"evictFailedBarePods", &a.evictFailedBarePods}, Legacy{"ignorePvcPods", &a.ignorePvcPods},
        Legacy{"ignorePodsWithoutPDB", &a.ignorePodsWithoutPDB}}) {
    std::optional<bool> legacy;
    KD_TRY(r.readBool(l.key, legacy));
    *l.field = legacy.value_or(false);
  }
  bool anyLegacy = a.evictLocalStoragePods || a.evictDaemonSetPods || a.evictSystemCriticalPods ||
                   a.evictFailedBarePods || a.ignorePvcPods || a.ignorePodsWithoutPDB;
  if (anyLegacy && (!a.defaultDisabled.empty() || !a.extraEnabled.empty()))
    return r.error(
        "podProtections",
        "cannot use Deprecated fields alongside PodProtections.ExtraEnabled or PodProtections.DefaultDisabled");
  KD_TRY(checkEmptyStorageClass(r, a, emptyClass, warnings));
  KD_TRY(r.finish());
  return a;
}

std::set<std::string> effectiveProtections(const Args& a) {
  std::set<std::string> on;
  if (!a.defaultDisabled.empty() || !a.extraEnabled.empty()) {
    for (const auto& p : kDefaultProtections)
      if (std::find(a.defaultDisabled.begin(), a.defaultDisabled.end(), p) == a.defaultDisabled.end()) on.insert(p);
    for (const auto& p : a.extraEnabled) on.insert(p);
    return on;
  }
  if (!a.evictLocalStoragePods) on.insert(kPodsWithLocalStorage);
  if (!a.evictSystemCriticalPods) on.insert(kSystemCriticalPods);
  if (!a.evictFailedBarePods) on.insert(kFailedBarePods);
  if (!a.evictDaemonSetPods) on.insert(kDaemonSetPods);
  if (a.ignorePvcPods) on.insert(kPodsWithPVC);
  if (a.ignorePodsWithoutPDB) on.insert(kPodsWithoutPDB);
  return on;
}

}  // namespace kdesched::plugins::defaultevictor
