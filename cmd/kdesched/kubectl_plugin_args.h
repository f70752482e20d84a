// `kubectl kdesched ...`: the command line of the kubectl plugin, read as kubectl reads its own
// (current context and kubeconfig, --context, -n/--namespace, -o). The same binary answers as
// `kubectl-kdesched` (argv[0]; a symlink named so on PATH is what kubectl and krew run).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kdesched::cmd {

// kubectl's habits: 0 done, 1 an error (the cluster, a missing object, no policy found), and 2 a
// command line that does not parse (kubectl itself uses 1 for that too; 2 lets scripts tell them
// apart).
inline constexpr int kPluginExitError = 1;
inline constexpr int kPluginExitUsage = 2;

// argv[0] names the plugin: its file name is kubectl-kdesched (kubectl runs plugins by full path).
bool isKubectlPluginName(const std::string& argv0);

struct PluginArgs {
  enum class Command { Plan, Explain, Status, Version, Help };
  Command command = Command::Help;
  std::string kubeconfig, context, ns, requestTimeout = "30s";
  std::string output = "table";  // table (kubectl's default), wide, json, yaml
  std::string kdeschedNamespace = "kube-system", release;
  std::string policyFile;   // plan, explain: instead of the installed one
  std::string pod;          // explain
  std::size_t events = 10;  // status
  std::string helpText;     // Help: what to print (on stdout)
};

// Parses argv[1..]. An error is the message for stderr (exit kPluginExitUsage).
struct PluginParse {
  std::optional<PluginArgs> args;
  std::string error;
};
PluginParse parsePluginArgs(const std::vector<std::string>& args);

// The namespace explain looks in: -n, else the context's, else "default", as kubectl.
std::string pluginNamespace(const std::string& flag, const std::string& contextNamespace);

}  // namespace kdesched::cmd
