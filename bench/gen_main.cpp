// kdesched-gen: writes a synthetic cluster snapshot (see cluster_gen.h) for `kdesched plan` and for
// loading into a test control plane (--kwok --format ndjson, then bench/load_cluster.py).
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "bench/cluster_gen.h"

int main(int argc, char** argv) {
  kdesched::bench::GenOptions o;
  std::string out = "-";
  std::string format = "list";
  CLI::App app{"Generate a synthetic cluster snapshot (kubectl -o json List, or one object per line)", "kdesched-gen"};
  app.add_option("--nodes", o.nodes, "Nodes")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--pods", o.pods, "Pods")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--namespaces", o.namespaces, "Namespaces the workloads are spread over")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Random seed")->capture_default_str();
  app.add_option("--violations", o.violations, "Planted violations")->capture_default_str();
  app.add_option("--idle-share", o.idleShare, "Share of nodes left without round-robin pods")->capture_default_str();
  app.add_option("--hot-share", o.hotShare, "Share of the other pods put on the first tenth of the nodes")
      ->capture_default_str();
  app.add_option("--format", format, "list (a v1 List) or ndjson (one object per line, in creation order)")
      ->check(CLI::IsMember({"list", "ndjson"}))
      ->capture_default_str();
  app.add_flag("--kwok", o.kwok,
               "For a kwok control plane: kwok node annotation, ReplicaSet objects, no server-owned fields");
  app.add_flag("--wire", o.wire, "Objects as the API server returns them (managedFields, full status): ~4 KB per pod");
  app.add_flag("--metrics", o.metrics,
               "Append NodeMetrics and PodMetrics lists (metrics.k8s.io/v1beta1) for every node and pod, usage "
               "derived from requests, for balancing by usage in `kdesched plan` (format list only)");
  std::string promOut;
  app.add_option("--prometheus-answer", promOut,
                 "Also write a Prometheus /api/v1/query answer scoring each node by cpu usage / allocatable "
                 "(the usage --metrics reports), for `kdesched plan --prometheus-result`");
  app.add_option("-o,--output", out, "Output file (- for stdout)");
  CLI11_PARSE(app, argc, argv);
  o.format = format == "ndjson" ? kdesched::bench::GenFormat::NdJson : kdesched::bench::GenFormat::List;
  if ((o.metrics || !promOut.empty()) && (o.format != kdesched::bench::GenFormat::List || o.kwok)) {
    std::cerr << "kdesched-gen: --metrics and --prometheus-answer are for `kdesched plan` snapshots (--format list, "
                 "no --kwok): a control plane gets its metrics from metrics-server\n";
    return 2;
  }
  kdesched::bench::GenStats st;
  std::string answer;
  std::string json = kdesched::bench::generateSnapshotJson(o, &st, promOut.empty() ? nullptr : &answer);
  if (!promOut.empty()) {
    std::ofstream f(promOut, std::ios::binary);
    f << answer;
    if (!f) {
      std::cerr << "kdesched-gen: cannot write " << promOut << "\n";
      return 2;
    }
  }
  if (out == "-") {
    std::cout << json;
  } else {
    std::ofstream f(out, std::ios::binary);
    f << json;
    if (!f) {
      std::cerr << "kdesched-gen: cannot write " << out << "\n";
      return 2;
    }
  }
  std::cerr << "nodes=" << o.nodes << " pods=" << st.pods << " namespaces=" << st.namespaces
            << " workloads=" << st.workloads << " pdbs=" << st.pdbs
            << " planted_anti_affinity=" << st.plantedAntiAffinity
            << " planted_node_affinity=" << st.plantedNodeAffinity << " planted_spread=" << st.plantedSpread
            << " bytes=" << json.size() << "\n";
  return 0;
}
