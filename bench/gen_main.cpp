// kdesched-gen: writes a synthetic cluster snapshot (see cluster_gen.h) for `kdesched plan` and for
// loading into a test control plane.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>

#include "bench/cluster_gen.h"

int main(int argc, char** argv) {
  kdesched::bench::GenOptions o;
  std::string out = "-";
  CLI::App app{"Generate a synthetic cluster snapshot (kubectl -o json List)", "kdesched-gen"};
  app.add_option("--nodes", o.nodes, "Nodes")->check(CLI::PositiveNumber);
  app.add_option("--pods", o.pods, "Pods")->check(CLI::PositiveNumber);
  app.add_option("--seed", o.seed, "Random seed");
  app.add_option("--violations", o.violations, "Planted violations");
  app.add_option("-o,--output", out, "Output file (- for stdout)");
  CLI11_PARSE(app, argc, argv);
  kdesched::bench::GenStats st;
  std::string json = kdesched::bench::generateSnapshotJson(o, &st);
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
  std::cerr << "nodes=" << o.nodes << " pods=" << st.pods << " workloads=" << st.workloads << " pdbs=" << st.pdbs
            << " planted_anti_affinity=" << st.plantedAntiAffinity << " planted_node_affinity=" << st.plantedNodeAffinity
            << " planted_spread=" << st.plantedSpread << " bytes=" << json.size() << "\n";
  return 0;
}
