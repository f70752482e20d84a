// Loading a cluster snapshot file: what `kubectl get nodes,pods,pdb,namespaces,priorityclasses,pvc
// -A -o json` (or `-o yaml`) writes. A v1 List, a typed list (PodList), a single object, a JSON
// array of objects, or a multi-document YAML stream.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/cluster/store.h"
#include "pkg/usage/usage.h"

namespace kdesched::cluster {

struct LoadReport {
  std::map<std::string, std::size_t> loaded;   // kind → objects loaded
  std::map<std::string, std::size_t> skipped;  // unknown kind → objects skipped
  // Named, counted skips that are not errors (e.g. a pod bound to a node missing from the file).
  std::vector<std::string> warnings;
  std::size_t bytes = 0;
};

// Decodes `text` into `store`. Fatal problems (not JSON/YAML, a malformed object, a bad quantity)
// return an error prefixed with `sourceName` and the item's position; nothing is half-loaded.
// With `metrics`, metrics.k8s.io NodeMetrics and PodMetrics items (as `kubectl get --raw
// /apis/metrics.k8s.io/v1beta1/nodes` and `/pods` print them) are read into it, a
// KubernetesMetrics reading; without, they are skipped and counted like any other kind.
Result<LoadReport> loadSnapshot(std::string_view text, const std::string& sourceName, Store& store,
                                usage::SourceReadings* metrics = nullptr);
// Counts, in `report`, the pods bound to a node that `objects` lack (no strategy considers them),
// naming the first 20 in its warnings. loadSnapshot does this; a live plan (pkg/daemon/live_plan.h)
// does it for what it read, so both report the same.
void notePodsOnUnknownNodes(const std::vector<api::Object>& objects, LoadReport& report);

// A snapshot larger than this is refused before it is read in full (`kdesched plan
// --max-snapshot-bytes` overrides it): /dev/zero or a wrong path must not exhaust memory.
inline constexpr std::size_t kDefaultMaxSnapshotBytes = std::size_t{1} << 30;  // 1 GiB

Result<LoadReport> loadSnapshotFile(const std::string& path, Store& store,
                                    std::size_t maxBytes = kDefaultMaxSnapshotBytes,
                                    usage::SourceReadings* metrics = nullptr);

}  // namespace kdesched::cluster
