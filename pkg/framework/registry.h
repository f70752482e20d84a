// The explicit plugin registry: one function (plugins/registry.cpp: registerDefaultPlugins) lists
// every plugin. No static self-registration (a static library link silently drops such objects).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/framework/plugin.h"
#include "pkg/policy/policy.h"

namespace kdesched::framework {

// What a plugin factory may consult while decoding its args.
struct BuildContext {
  // Resolves a PriorityClass name to its value (DefaultEvictor's priorityThreshold.name). In plan
  // mode it reads the snapshot; live, the API server.
  std::function<Result<std::int32_t>(const std::string& name)> priorityClassValue;
  // The clock (seconds since the epoch) for age-based checks; plan mode can pin it with --now.
  std::function<api::Timestamp()> now;
};

// Decodes, validates and defaults the args at `args` (strictly: unknown keys are errors), then
// builds the plugin. Errors name the field path.
using PluginFactory =
    std::function<Result<std::unique_ptr<Plugin>>(const policy::RawArgs& args, const BuildContext& ctx)>;

struct PluginRegistration {
  std::string name;
  PluginFactory factory;
};

class Registry {
 public:
  // Fails, and keeps the first registration, when the name is taken (two plugins under one name
  // would make the policy's choice depend on the order of registration) or when the name or the
  // factory is empty.
  [[nodiscard]] Status add(PluginRegistration r);
  const PluginRegistration* find(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted

 private:
  std::map<std::string, PluginRegistration> plugins_;
};

}  // namespace kdesched::framework
