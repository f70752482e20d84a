#include "cmd/kdesched/plan_source.h"

namespace kdesched::cmd {
namespace {

std::string list(const std::vector<std::string>& flags) {
  std::string out;
  for (const auto& f : flags) out += (out.empty() ? "" : ", ") + f;
  return out;
}

Status snapshotOnlyRefused(const PlanSourceFlags& f, const std::string& source) {
  if (f.snapshotOnly.empty()) return Status::ok();
  return Status::error(list(f.snapshotOnly) + ": only for --snapshot FILE, not for a plan read from " + source);
}

}  // namespace

Result<PlanSource> choosePlanSource(const PlanSourceFlags& f, const char* serviceHost, const char* kubeconfigEnv) {
  if (!f.kubeconfig.empty() && !f.clientKubeconfig.empty() && f.kubeconfig != f.clientKubeconfig)
    return Status::error("--kubeconfig \"" + f.kubeconfig + "\" and --client-connection-kubeconfig \"" +
                         f.clientKubeconfig + "\" name different files: give one");
  const std::string kubeconfig = f.clientKubeconfig.empty() ? f.kubeconfig : f.clientKubeconfig;
  const char* kubeconfigFlag = f.clientKubeconfig.empty() ? "--kubeconfig" : "--client-connection-kubeconfig";
  if (!f.snapshot.empty()) {
    if (!kubeconfig.empty())
      return Status::error(std::string("--snapshot reads a file and ") + kubeconfigFlag +
                           " the cluster: give one of them");
    if (!f.saveSnapshot.empty())
      return Status::error(
          "--save-snapshot saves what a plan read from the cluster (--kubeconfig, or in-cluster); "
          "with --snapshot the file already is the snapshot");
    if (!f.liveOnly.empty())
      return Status::error(list(f.liveOnly) + ": only for a plan read from the cluster, not for --snapshot FILE");
    return PlanSource{PlanSource::Kind::Snapshot, f.snapshot};
  }
  if (!kubeconfig.empty()) {
    KD_TRY(snapshotOnlyRefused(f, kubeconfig));
    return PlanSource{PlanSource::Kind::Kubeconfig, kubeconfig};
  }
  if (serviceHost && *serviceHost) {
    KD_TRY(snapshotOnlyRefused(f, "the cluster (in-cluster config)"));
    return PlanSource{PlanSource::Kind::InCluster, ""};
  }
  std::string why =
      "no cluster state to plan on: give --snapshot FILE (what `kubectl get ... -o json` wrote) or --kubeconfig "
      "FILE (read the cluster; in a pod, in-cluster config is used)";
  if (kubeconfigEnv && *kubeconfigEnv)
    why += "; plan does not read $KUBECONFIG by itself: --kubeconfig \"" + std::string(kubeconfigEnv) +
           "\" reads that cluster";
  return Status::error(why);
}

}  // namespace kdesched::cmd
