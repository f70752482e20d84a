// kubectl's -o yaml for what kdesched writes as JSON.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

namespace kdesched::inspect {

// Writes `j` as one YAML document (block style; strings quoted where YAML would read them as
// something else).
void writeYaml(const nlohmann::ordered_json& j, std::ostream& out);

}  // namespace kdesched::inspect
