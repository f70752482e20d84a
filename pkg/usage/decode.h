// Decoding usage from what the sources answer: metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics
// (a LIST page, or `kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes` and `/pods`) and a
// Prometheus `/api/v1/query` answer. The same decoders serve `kdesched plan` and the daemon. This
// header names no JSON library; the simdjson-typed item decoders the snapshot loader uses are in
// pkg/usage/detail/ondemand.h.
#pragma once

#include <string>
#include <string_view>

#include "pkg/api/decode.h"
#include "pkg/base/status.h"
#include "pkg/usage/usage.h"

namespace kdesched::usage {

// Adds every item of a NodeMetricsList or PodMetricsList (JSON text) to `out`, which must be a
// KubernetesMetrics reading. Call out.pods.finish() once every page is in. Errors name the item
// (`items[3]: usage.cpu: invalid quantity "x"`). A collector passes the same `parser` every time:
// its buffers are then allocated once (a 150k-pod list faults in ~40 MB of fresh pages otherwise).
// `continueToken`, when given, receives the page's metadata.continue ("" on the last page);
// `items`, when given, is increased by the number of items read (as the snapshot loader counts them).
Status addMetricsList(std::string_view json, SourceReadings& out, api::JsonParser* parser = nullptr,
                      std::string* continueToken = nullptr, std::size_t* items = nullptr);

// The JSON body of a Prometheus instant query answer, into a Prometheus reading, with upstream's
// checks (an answer other than a vector, a sample without `instance` or with a value outside
// [0, 1] is an error; upstream fails the plugin on each). A NaN or infinite value is kept, for the
// plugin to leave that node out; an `instance` named twice is dropped with a note (upstream keeps
// whichever came last). `parser` as for addMetricsList.
Status decodePrometheusAnswer(std::string_view json, SourceReadings& out, api::JsonParser* parser = nullptr);

}  // namespace kdesched::usage
