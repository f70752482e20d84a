#include "cmd/kdesched/kubectl_plugin_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kdesched::cmd {
namespace {

using ::testing::HasSubstr;
using Command = PluginArgs::Command;

PluginArgs parsed(const std::vector<std::string>& argv) {
  PluginParse p = parsePluginArgs(argv);
  EXPECT_TRUE(p.args) << p.error;
  return p.args ? *p.args : PluginArgs{};
}

std::string refused(const std::vector<std::string>& argv) {
  PluginParse p = parsePluginArgs(argv);
  EXPECT_FALSE(p.args);
  return p.error;
}

TEST(KubectlPluginName, TheFileNameOfArgv0Decides) {
  EXPECT_TRUE(isKubectlPluginName("/usr/local/bin/kubectl-kdesched"));
  EXPECT_TRUE(isKubectlPluginName("kubectl-kdesched"));
  EXPECT_FALSE(isKubectlPluginName("/usr/local/bin/kdesched"));
  EXPECT_FALSE(isKubectlPluginName("/opt/kubectl-kdesched/kdesched"));
  EXPECT_FALSE(isKubectlPluginName("kubectl-kdesched-old"));
}

TEST(KubectlPluginArgs, KubectlsGlobalFlagsGoBeforeOrAfterTheCommand) {
  const PluginArgs a = parsed({"--context", "prod", "explain", "payment-1", "-n", "shop", "-o", "yaml"});
  EXPECT_EQ(a.command, Command::Explain);
  EXPECT_EQ(a.context, "prod");
  EXPECT_EQ(a.ns, "shop");
  EXPECT_EQ(a.output, "yaml");
  EXPECT_EQ(a.pod, "payment-1");
  const PluginArgs b = parsed({"plan", "--kubeconfig", "/k", "--kdesched-namespace", "ops", "--release", "r"});
  EXPECT_EQ(b.command, Command::Plan);
  EXPECT_EQ(b.kubeconfig, "/k");
  EXPECT_EQ(b.kdeschedNamespace, "ops");
  EXPECT_EQ(b.release, "r");
  EXPECT_EQ(b.output, "table");
}

TEST(KubectlPluginArgs, TheDefaultsAreKubectlsAndTheCharts) {
  const PluginArgs a = parsed({"status"});
  EXPECT_EQ(a.command, Command::Status);
  EXPECT_EQ(a.kdeschedNamespace, "kube-system");
  EXPECT_EQ(a.requestTimeout, "30s");
  EXPECT_EQ(a.events, 10u);
  EXPECT_EQ(parsed({"status", "--events", "3", "-o", "wide"}).events, 3u);
}

TEST(KubectlPluginArgs, APodMayBeNamedAsKubectlsTypeSlashName) {
  EXPECT_EQ(parsed({"explain", "pod/payment-1"}).pod, "payment-1");
  EXPECT_EQ(parsed({"explain", "pods/payment-1"}).pod, "payment-1");
}

TEST(KubectlPluginArgs, UsageErrorsSayWhatIsWrong) {
  EXPECT_THAT(refused({"explain"}), HasSubstr("POD is required"));
  EXPECT_THAT(refused({"plan", "-o", "xml"}), HasSubstr("xml"));
  EXPECT_THAT(refused({"plan", "--bogus"}), HasSubstr("--bogus"));
  EXPECT_THAT(refused({"status", "--policy-config-file", "p.yaml"}), HasSubstr("--policy-config-file"));
  EXPECT_THAT(refused({"frobnicate"}), HasSubstr("frobnicate"));
  EXPECT_THAT(refused({"plan", "-n", "shop"}), HasSubstr("-n/--namespace is for explain"));
}

TEST(KubectlPluginArgs, HelpAndNoCommandPrintTheHelp) {
  const PluginArgs none = parsed({});
  EXPECT_EQ(none.command, Command::Help);
  EXPECT_THAT(none.helpText, HasSubstr("explain"));
  const PluginArgs explainHelp = parsed({"explain", "--help"});
  EXPECT_EQ(explainHelp.command, Command::Help);
  EXPECT_THAT(explainHelp.helpText, HasSubstr("POD"));
  EXPECT_EQ(parsed({"version"}).command, Command::Version);
}

TEST(KubectlPluginNamespace, TheFlagThenTheContextThenDefault) {
  EXPECT_EQ(pluginNamespace("shop", "ctx-ns"), "shop");
  EXPECT_EQ(pluginNamespace("", "ctx-ns"), "ctx-ns");
  EXPECT_EQ(pluginNamespace("", ""), "default");
}

}  // namespace
}  // namespace kdesched::cmd
