// `kubectl kdesched plan | explain POD | status`: the kubectl plugin (kubectl_plugin_args.h reads
// its command line). Live and read-only: plan and explain run the daemon's live plan with the
// installed daemon's policy (the chart's ConfigMap) or --policy-config-file; status reads the
// daemon's Lease, metrics and Events (pkg/inspect).
#pragma once

namespace kdesched::cmd {

int runKubectlPlugin(int argc, char** argv);

}  // namespace kdesched::cmd
