// kdesched: flags and subcommands only; everything else lives in pkg/.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "pkg/api/decode.h"
#include "pkg/plan/plan.h"

namespace {

constexpr int kExitBadInput = 2;

std::string oneLine(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = ';';
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr so stdout carries only the plan (machine-readable with -o json).
  spdlog::set_default_logger(spdlog::stderr_logger_mt("kdesched"));
  spdlog::set_level(spdlog::level::warn);

  CLI::App app{"kdesched: a Kubernetes descheduler (policy-compatible with kubernetes-sigs/descheduler)", "kdesched"};
  app.require_subcommand(0, 1);

  kdesched::plan::PlanOptions planOpts;
  std::string format = "table";
  std::string now;
  auto* plan = app.add_subcommand("plan", "Run one descheduling cycle on a snapshot file and print what would be evicted, and why");
  plan->add_option("--snapshot", planOpts.snapshotPath,
                   "Cluster snapshot: `kubectl get nodes,pods,pdb,namespaces,priorityclasses,pvc -A -o json` (or -o yaml)")
      ->required();
  plan->add_option("--policy-config-file", planOpts.policyPath, "DeschedulerPolicy (descheduler/v1alpha2) file")
      ->required();
  plan->add_option("-o,--output", format, "Output format")->check(CLI::IsMember({"table", "json"}));
  plan->add_option("--now", now, "Evaluate age-based checks (minPodAge) at this RFC 3339 time instead of the current time");

  auto* version = app.add_subcommand("version", "Print the version");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "kdesched: " << e.what() << " (see --help)\n";
    return kExitBadInput;
  }

  if (version->parsed()) {
    std::cout << "kdesched " << KDESCHED_VERSION << "\n";
    return 0;
  }
  if (plan->parsed()) {
    planOpts.format = format == "json" ? kdesched::plan::OutputFormat::Json : kdesched::plan::OutputFormat::Table;
    if (!now.empty()) {
      auto ts = kdesched::api::parseTimestamp(now);
      if (!ts.isOk()) {
        std::cerr << "kdesched: --now: " << ts.error() << "\n";
        return kExitBadInput;
      }
      planOpts.now = *ts;
    }
    kdesched::Status st = kdesched::plan::runPlan(planOpts, std::cout);
    if (!st.isOk()) {
      std::cerr << "kdesched: " << oneLine(st.message()) << "\n";
      return kExitBadInput;
    }
    return 0;
  }
  std::cerr << "kdesched: the live daemon is not built yet; use `kdesched plan` (see --help)\n";
  return kExitBadInput;
}
