// One pass over a YAML event stream before any node is built. yaml-cpp 0.7's LoadAll() never
// returns on some malformed streams, allocating until the process dies: on a document that starts
// with a token it cannot handle ("," for one) the parser reports an empty document without
// consuming the token, forever (jbeder/yaml-cpp#1040, fixed after 0.8). A document that starts
// where the previous one started is that loop; the scan stops there. Every reader of untrusted
// YAML (policy, snapshots) scans first, then loads.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace kdesched::api {

struct YamlScan {
  bool stuck = false;  // the loop above: do not LoadAll this text
  YAML::Mark stuckAt = YAML::Mark::null_mark();
  std::size_t documents = 0;
  std::size_t nonEmpty = 0;                             // documents holding something other than null
  YAML::Mark secondDocument = YAML::Mark::null_mark();  // where the second non-empty one starts
};

// Throws YAML::Exception for malformed YAML, as the parser does.
YamlScan scanYaml(const std::string& text);

}  // namespace kdesched::api
