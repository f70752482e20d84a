// Plugin args the way the policy loader hands them to a plugin: the YAML goes through
// policy::parsePolicy, so args tests do not depend on how RawArgs keeps the document.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "pkg/policy/policy.h"

namespace kdesched::testing {

// Where the args of rawArgs() sit in its policy: errors name `<kArgsPath>.<field>`.
inline constexpr const char* kArgsPath = "profiles[0].pluginConfig[0].args";

// The args of `plugin` from `yaml`, a mapping without indentation (block or flow style). An empty
// `yaml` leaves `args:` out of the policy, as an operator who sets none.
inline policy::RawArgs rawArgs(const std::string& plugin, const std::string& yaml) {
  std::string text =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: test\n"
      "  pluginConfig:\n  - name: " +
      plugin + "\n";
  if (!yaml.empty()) {
    text += "    args:\n";
    std::istringstream lines(yaml);
    for (std::string line; std::getline(lines, line);) text += "      " + line + "\n";
  }
  auto policy = policy::parsePolicy(text, "policy.yaml");
  if (!policy.isOk()) {
    ADD_FAILURE() << "the test's args do not parse as a policy: " << policy.error();
    return {};
  }
  return policy->profiles.at(0).pluginConfig.at(0).args;
}

// The error a decoder gives for `yaml`, or "" when it accepts the args.
template <typename Decoder>
std::string decodeError(Decoder decode, const std::string& plugin, const std::string& yaml) {
  auto args = decode(rawArgs(plugin, yaml));
  return args.isOk() ? "" : args.error();
}

// One args document a decoder must reject, and the whole error it must give after kArgsPath
// (e.g. ".namespaces: only one of Include/Exclude namespaces can be set").
struct RejectedArgs {
  std::string name;  // a gtest name: letters, digits, underscores
  std::string yaml;
  std::string error;
};

inline void PrintTo(const RejectedArgs& c, std::ostream* os) { *os << c.name; }

inline std::string rejectedArgsName(const ::testing::TestParamInfo<RejectedArgs>& info) { return info.param.name; }

}  // namespace kdesched::testing
