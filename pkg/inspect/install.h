// What the chart (helm/kdesched) installed, found from outside the cluster by the chart's labels:
// the DeschedulerPolicy in its ConfigMap, and the workload (Deployment or CronJob) with the flags
// it runs with. Read by the kubectl plugin (cmd/kdesched/kubectl_plugin.h), which plans with the
// installed policy and reports what the daemon is doing.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "pkg/base/status.h"
#include "pkg/kube/client.h"

namespace kdesched::inspect {

// Where to look: the namespace the chart was installed in, and optionally its release name.
struct InstallQuery {
  std::string ns = "kube-system";
  std::string release;  // "": any release
};

// The label selector that finds the chart's objects. app.kubernetes.io/name is "kdesched", or
// "descheduler" with nameOverride (an upstream values file), whose policy kdesched reads the same.
std::string chartSelector(const InstallQuery& q);
// The same in words, for messages that say what was looked for.
std::string describeQuery(const InstallQuery& q);

struct InstalledPolicy {
  std::string yaml;
  std::string source;  // "ConfigMap kube-system/kdesched (policy.yaml)"
};

// The chart's ConfigMap holding policy.yaml. None, or several releases' without --release, is an
// error that says what was looked for and what to pass instead.
Result<InstalledPolicy> findInstalledPolicy(kube::Client& client, const InstallQuery& q);

// The installed workload and the flags that matter from outside: the Lease, the metrics port.
struct Workload {
  std::string kind;  // "Deployment" or "CronJob"
  std::string ns, name;
  int replicas = 0, readyReplicas = 0;            // a Deployment
  std::string lastScheduleTime, lastSuccessTime;  // a CronJob (RFC 3339, "" when never)
  bool leaderElect = false;
  std::string leaseNs = "kube-system", leaseName = "descheduler";  // the binary's defaults, as upstream's
  bool plainHttp = false;
  int securePort = 10258;
};

// The flags of interest from a container's args (--flag=value or --flag value), over `w`'s defaults.
void readDaemonArgs(const std::vector<std::string>& args, Workload& w);

// The chart's Deployment, else its CronJob; nullopt when neither is there.
Result<std::optional<Workload>> findWorkload(kube::Client& client, const InstallQuery& q);

}  // namespace kdesched::inspect
