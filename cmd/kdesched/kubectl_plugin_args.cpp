#include "cmd/kdesched/kubectl_plugin_args.h"

#include "cmd/kdesched/validators.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>

namespace kdesched::cmd {
namespace {

constexpr const char* kAbout =
    "kdesched as a kubectl plugin: what the descheduler would evict now and why, why a pod is or is not "
    "evicted, and what the installed daemon is doing. Read-only: it never evicts or writes.";

void addGlobalFlags(CLI::App& app, PluginArgs& a) {
  app.add_option("--kubeconfig", a.kubeconfig,
                 "Kubeconfig file (default: $KUBECONFIG's files merged as kubectl does, else ~/.kube/config)");
  app.add_option("--context", a.context, "The kubeconfig context to use (default: its current-context)");
  app.add_option("-n,--namespace", a.ns,
                 "The namespace of the pod to explain (default: the context's namespace, else default)");
  app.add_option("--request-timeout", a.requestTimeout, "The longest one API request may take (Go duration)")
      ->capture_default_str();
  app.add_option("--kdesched-namespace", a.kdeschedNamespace,
                 "Where the chart installed kdesched: its ConfigMap, Deployment and Service")
      ->capture_default_str();
  app.add_option("--release", a.release, "The chart's release name, when several are installed in that namespace");
}

void addOutput(CLI::App* cmd, PluginArgs& a) {
  cmd->add_option("-o,--output", a.output, "Output format: json, yaml or wide (default: a table)")
      ->check(CLI::IsMember({"json", "yaml", "wide"}));
}

void addPolicy(CLI::App* cmd, PluginArgs& a) {
  cmd->add_option("--policy-config-file", a.policyFile,
                  "Plan with this DeschedulerPolicy file instead of the installed daemon's (its ConfigMap)");
}

// "pod/NAME" and "pods/NAME" name a pod as kubectl's TYPE/NAME does.
std::string podName(std::string s) {
  for (const char* prefix : {"pod/", "pods/", "po/"})
    if (s.rfind(prefix, 0) == 0) return s.substr(std::string(prefix).size());
  return s;
}

}  // namespace

bool isKubectlPluginName(const std::string& argv0) {
  return std::filesystem::path(argv0).filename() == "kubectl-kdesched";
}

std::string pluginNamespace(const std::string& flag, const std::string& contextNamespace) {
  if (!flag.empty()) return flag;
  return contextNamespace.empty() ? "default" : contextNamespace;
}

PluginParse parsePluginArgs(const std::vector<std::string>& argv) {
  PluginArgs a;
  CLI::App app{kAbout, "kubectl kdesched"};
  app.fallthrough();
  app.require_subcommand(0, 1);
  addGlobalFlags(app, a);
  CLI::App* plan = app.add_subcommand(
      "plan", "What kdesched would evict now, with the rule each pod broke, and what it refused (live, read-only)");
  addOutput(plan, a);
  addPolicy(plan, a);
  CLI::App* explain = app.add_subcommand(
      "explain", "Why kdesched would or would not evict POD: what every profile and plugin made of it");
  explain->add_option("POD", a.pod, "The pod (NAME or pod/NAME), in -n's namespace")->required();
  addOutput(explain, a);
  addPolicy(explain, a);
  CLI::App* status = app.add_subcommand(
      "status", "What the installed daemon is doing: its Lease, its metrics (through the API server), its Events");
  addOutput(status, a);
  status->add_option("--events", a.events, "How many of the most recent Events to show")
      ->capture_default_str()
      ->check(cmd::nonNegative());
  CLI::App* version = app.add_subcommand("version", "Print the version");

  std::vector<std::string> reversed(argv.rbegin(), argv.rend());  // CLI11 takes them last-first
  PluginParse out;
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    a.command = PluginArgs::Command::Help;
    a.helpText = app.help();
    out.args = std::move(a);
    return out;
  } catch (const CLI::ParseError& e) {
    out.error = std::string(e.what()) + " (see kubectl kdesched --help)";
    return out;
  }
  a.pod = podName(a.pod);
  if (plan->parsed()) a.command = PluginArgs::Command::Plan;
  if (explain->parsed()) a.command = PluginArgs::Command::Explain;
  if (status->parsed()) a.command = PluginArgs::Command::Status;
  if (version->parsed()) a.command = PluginArgs::Command::Version;
  if (a.command == PluginArgs::Command::Help) a.helpText = app.help();
  if (a.command == PluginArgs::Command::Plan && !a.ns.empty()) {
    out.error =
        "plan covers the whole cluster, as the daemon does: -n/--namespace is for explain (kubectl kdesched "
        "explain POD -n " +
        a.ns + ")";
    return out;
  }
  out.args = std::move(a);
  return out;
}

}  // namespace kdesched::cmd
