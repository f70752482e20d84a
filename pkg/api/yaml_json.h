// YAML to JSON, as kubectl and sigs.k8s.io/yaml convert it: snapshot files may be `kubectl get -o
// yaml` output, and the JSON decoders then read them like API-server JSON. yaml-cpp is slow
// (~10 MB/s), so large snapshots are better as JSON.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pkg/base/status.h"

namespace kdesched::api {

// Converts YAML text (one document) to JSON text, typing plain scalars as the API server would
// read them (yaml_scalar.h: quoted strings stay strings; unquoted true/false/null/numbers become
// JSON scalars). Duplicate mapping keys are an error naming the key and line.
Result<std::string> yamlDocumentToJson(std::string_view yaml);

// Splits a YAML stream ("---"-separated documents) and converts each non-empty document to JSON.
Result<std::vector<std::string>> yamlStreamToJson(std::string_view yaml);

}  // namespace kdesched::api
