// Upstream: DefaultEvictor (plugins/defaultevictor/).
// Its args: upstream's names, defaults and validation messages (types.go there, with the default pod
// protections, and validation.go).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/framework/registry.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins::defaultevictor {

inline constexpr const char* kName = "DefaultEvictor";

// Protections on by default, and the extra ones that can be switched on.
inline constexpr const char* kPodsWithLocalStorage = "PodsWithLocalStorage";
inline constexpr const char* kSystemCriticalPods = "SystemCriticalPods";
inline constexpr const char* kFailedBarePods = "FailedBarePods";
inline constexpr const char* kDaemonSetPods = "DaemonSetPods";
inline constexpr const char* kPodsWithPVC = "PodsWithPVC";
inline constexpr const char* kPodsWithoutPDB = "PodsWithoutPDB";
inline constexpr const char* kPodsWithResourceClaims = "PodsWithResourceClaims";

struct Args {
  std::string nodeSelector;
  std::optional<api::LabelSelector> labelSelector;
  std::optional<api::LabelSelector> namespaceLabelSelector;
  std::optional<std::int32_t> priorityThresholdValue;
  std::optional<std::string> priorityThresholdName;
  bool nodeFit = false;
  std::uint32_t minReplicas = 0;
  std::optional<double> minPodAgeSeconds;
  std::string noEvictionPolicy;  // "", Preferred, Mandatory
  std::vector<std::string> defaultDisabled;
  std::vector<std::string> extraEnabled;
  std::vector<std::string> protectedStorageClasses;
  // Deprecated booleans (legacy form of podProtections).
  bool evictLocalStoragePods = false;
  bool evictDaemonSetPods = false;
  bool evictSystemCriticalPods = false;
  bool evictFailedBarePods = false;
  bool ignorePvcPods = false;
  bool ignorePodsWithoutPDB = false;
};

// Decodes strictly and validates; errors name the field path, `warnings` gets what loads as upstream
// loads it but is worth a word.
Result<Args> decodeArgs(const policy::RawArgs& raw, policy::Warnings& warnings);

// The protections in force: podProtections when either list is non-empty, else the legacy booleans.
std::set<std::string> effectiveProtections(const Args& a);

}  // namespace kdesched::plugins::defaultevictor
