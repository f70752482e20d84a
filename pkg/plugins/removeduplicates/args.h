// Upstream: RemoveDuplicates (plugins/removeduplicates/).
// Its args: upstream's names, defaults and validation messages (types.go, defaults.go and validation.go there).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/policy/args.h"
#include "pkg/policy/policy.h"

namespace kdesched::plugins::removeduplicates {

inline constexpr const char* kName = "RemoveDuplicates";

struct Args {
  // A pod with an owner reference of one of these kinds is never a duplicate (nor counted).
  std::vector<std::string> excludeOwnerKinds;
  // Unset: pods of every namespace. Upstream has no labelSelector for this plugin.
  std::optional<policy::Namespaces> namespaces;
};

// Decodes strictly and validates with upstream's messages; errors name the field path.
Result<Args> decodeArgs(const policy::RawArgs& raw);

}  // namespace kdesched::plugins::removeduplicates
