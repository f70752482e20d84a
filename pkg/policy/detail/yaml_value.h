// The yaml-cpp side of pkg/policy: the node behind an opaque RawArgs, and how a YAML value is typed
// and shown in error messages. For pkg/policy's .cpp files and its tests only; the public headers
// keep yaml-cpp out of everything that includes them.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "pkg/api/yaml_scalar.h"
#include "pkg/policy/policy.h"

namespace kdesched::policy::detail {

struct YamlValue {
  YAML::Node node;
};

// Raw args holding `node` (which may be undefined or null) at `path`.
RawArgs rawArgs(YAML::Node node, std::string path);
// The node behind raw args; an undefined node when there is none.
const YAML::Node& yamlOf(const RawArgs& raw);

// Absent, or YAML null.
bool isUnset(const YAML::Node& n);
// How upstream types a scalar once sigs.k8s.io/yaml has converted it to JSON (api/yaml_scalar.h):
// quoted, block and !!str scalars are strings, plain ones are resolved; unset is Null.
api::PlainScalar scalarOf(const YAML::Node& n);

// `s` quoted and escaped for an error message, cut after maxBytes (never inside a UTF-8
// character): policy files can hold any bytes, messages must stay printable and short.
std::string quote(std::string_view s, std::size_t maxBytes = 64);
// How a YAML value reads after "got" in error messages: strings quoted and escaped (`"abc"`),
// numbers, booleans and null as written (`-1`, `true`, `null`), `a list` / `a mapping` otherwise.
// Long values are cut.
std::string describeValue(const YAML::Node& value);
// The 1-based line of a node, or "?" when yaml-cpp did not record one.
std::string lineOf(const YAML::Node& n);

}  // namespace kdesched::policy::detail
