#include "cmd/kdesched/kubectl_plugin.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

#include "cmd/kdesched/kubectl_plugin_args.h"
#include "pkg/base/clock.h"
#include "pkg/daemon/live_plan.h"
#include "pkg/daemon/runtime.h"
#include "pkg/inspect/install.h"
#include "pkg/inspect/output.h"
#include "pkg/inspect/status.h"
#include "pkg/kube/config.h"
#include "pkg/plan/plan.h"
#include "pkg/policy/args.h"

namespace kdesched::cmd {
namespace {

int fail(const std::string& message, int code = kPluginExitError) {
  std::string line = message;
  for (char& c : line)
    if (c == '\n') c = ';';
  std::cerr << "error: " << line << "\n";
  return code;
}

api::Timestamp nowSeconds() {
  return std::chrono::floor<std::chrono::seconds>(systemClock()->wallNow().time_since_epoch()).count();
}

// The connection as kubectl would make it, and the context's namespace.
struct Connection {
  std::unique_ptr<kube::Client> client;
  std::string contextNamespace;
};

Result<Connection> connect(const PluginArgs& a) {
  const auto timeout = policy::parseDuration(a.requestTimeout);
  if (!timeout || *timeout < 0.001)
    return Status::error("--request-timeout: not a duration (like 30s, 1m): \"" + a.requestTimeout + "\"");
  auto files = kube::kubeconfigFiles(a.kubeconfig, std::getenv("KUBECONFIG"), std::getenv("HOME"));
  auto kc = kube::loadKubeconfigFiles(files, a.context);
  if (!kc.isOk()) return kc.status();
  auto client = daemon::makeClient(std::move(kc->config), 0, 0, *timeout, systemClock());
  if (!client.isOk()) return Status::error("cannot set up the API client: " + client.error());
  return Connection{std::move(*client), kc->ns};
}

// JSON from `render` as asked: json as it is, yaml converted.
int writeMachine(const PluginArgs& a, const nlohmann::ordered_json& j) {
  if (a.output == "yaml")
    inspect::writeYaml(j, std::cout);
  else
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  return 0;
}

Status checkPodExists(kube::Client& client, const std::string& ns, const std::string& pod) {
  auto res = client.get("/api/v1/namespaces/" + ns + "/pods/" + pod);
  if (res.isOk()) return Status::ok();
  if (res.error().code == 404) return Status::error("pods \"" + pod + "\" not found in namespace \"" + ns + "\"");
  return Status::error("cannot read pod " + ns + "/" + pod + ": " + res.error().describe());
}

int runPlanOrExplain(const PluginArgs& a) {
  auto conn = connect(a);
  if (!conn.isOk()) return fail(conn.error());
  kube::Client& client = *conn->client;
  plan::PlanOptions options;
  if (a.command == PluginArgs::Command::Explain) {
    const std::string ns = pluginNamespace(a.ns, conn->contextNamespace);
    if (Status st = checkPodExists(client, ns, a.pod); !st.isOk()) return fail(st.message());
    options.explain = {ns + "/" + a.pod};
    options.explainOnly = true;
  }
  if (!a.policyFile.empty()) {
    options.policyPath = a.policyFile;
  } else {
    auto installed = inspect::findInstalledPolicy(client, {a.kdeschedNamespace, a.release});
    if (!installed.isOk()) return fail(installed.error());
    options.policyPath = installed->source;
    options.policyYaml = std::move(installed->yaml);
  }
  const bool machine = a.output == "json" || a.output == "yaml";
  options.format = machine ? plan::OutputFormat::Json : plan::OutputFormat::Table;
  std::ostringstream out;
  auto failed = daemon::runLivePlan(client, options, nowSeconds(), out);
  if (failed) return fail(failed->message);
  if (a.output != "yaml") {
    std::cout << out.str();
    return 0;
  }
  return writeMachine(a, nlohmann::ordered_json::parse(out.str()));
}

int runStatus(const PluginArgs& a) {
  auto conn = connect(a);
  if (!conn.isOk()) return fail(conn.error());
  inspect::StatusOptions options{{a.kdeschedNamespace, a.release}, a.events};
  const inspect::DaemonStatus s = inspect::readStatus(*conn->client, options, nowSeconds());
  if (s.notInstalled())
    return fail("kdesched is not installed in namespace " + s.ns + ": no Deployment, CronJob, Lease " + s.lease.ns +
                "/" + s.lease.name + " or Service " + inspect::describeQuery(options.install) +
                "; pass --kdesched-namespace NAMESPACE where the chart installed it");
  if (a.output == "json" || a.output == "yaml")
    writeMachine(a, inspect::statusJson(s));
  else
    inspect::writeStatusTable(s, a.output == "wide", std::cout);
  return s.complete() ? 0 : kPluginExitError;
}

}  // namespace

int runKubectlPlugin(int argc, char** argv) {
  PluginParse parsed = parsePluginArgs(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.args) return fail(parsed.error, kPluginExitUsage);
  const PluginArgs& a = *parsed.args;
  switch (a.command) {
    case PluginArgs::Command::Help: std::cout << a.helpText; return 0;
    case PluginArgs::Command::Version: std::cout << "kubectl-kdesched " << KDESCHED_VERSION << "\n"; return 0;
    case PluginArgs::Command::Status: return runStatus(a);
    case PluginArgs::Command::Plan:
    case PluginArgs::Command::Explain: return runPlanOrExplain(a);
  }
  return kPluginExitError;
}

}  // namespace kdesched::cmd
