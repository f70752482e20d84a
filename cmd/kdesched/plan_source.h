// Where `kdesched plan` reads the cluster state from: a snapshot file (--snapshot), or the API
// server (--kubeconfig, upstream's --client-connection-kubeconfig spelling too, or in-cluster
// config in a pod). Exactly one; the flags that only make sense for one source are refused with the
// other, so a command line never silently means something else than it says.
#pragma once

#include <string>
#include <vector>

#include "pkg/base/status.h"

namespace kdesched::cmd {

struct PlanSourceFlags {
  std::string snapshot;          // --snapshot
  std::string kubeconfig;        // --kubeconfig
  std::string clientKubeconfig;  // --client-connection-kubeconfig
  std::string saveSnapshot;      // --save-snapshot
  // The flags given that only a live plan uses (--client-connection-qps, ...), and those only a
  // snapshot uses (--max-snapshot-bytes), as "--name".
  std::vector<std::string> liveOnly;
  std::vector<std::string> snapshotOnly;
};

struct PlanSource {
  enum class Kind { Snapshot, Kubeconfig, InCluster };
  Kind kind = Kind::Snapshot;
  std::string path;  // the snapshot file, or the kubeconfig; "" in-cluster
};

// `serviceHost` and `kubeconfigEnv` are $KUBERNETES_SERVICE_HOST and $KUBECONFIG (null: unset): in a
// pod, no flag means in-cluster config; $KUBECONFIG is never read by plan (a shell that has it set
// must not turn a forgotten --snapshot into a read of whatever cluster it names), only suggested.
Result<PlanSource> choosePlanSource(const PlanSourceFlags& flags, const char* serviceHost, const char* kubeconfigEnv);

}  // namespace kdesched::cmd
