#include "cmd/kdesched/upstream_flags.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace kdesched::cmd {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using Args = std::vector<std::string>;

// component-base's WordSepNormalizeFunc: a flag name's underscores are dashes (the value's are
// kept), for the flags kdesched implements and the ones it takes out alike.
TEST(UpstreamArgs, UnderscoresInAFlagNameAreDashesAsPflagNormalizesThem) {
  const UpstreamArgs out = normalizeUpstreamArgs(
      {"--logging_format=json", "--policy_config_file", "/etc/my_policy.yaml", "--dry_run", "--cert_dir=/a_b", "-v=3"});
  EXPECT_THAT(out.args, ElementsAre("--logging-format=json", "--policy-config-file", "/etc/my_policy.yaml", "--dry-run",
                                    "--v=3"));
  EXPECT_THAT(out.ignored, ElementsAre("--cert-dir"));
  EXPECT_THAT(out.repeated, IsEmpty());
}

// pflag keeps the last value of a flag given twice; the parser does that, this names them for
// the warning (whatever the spelling: "-v" is "--v", "--a_b" is "--a-b").
TEST(UpstreamArgs, AFlagGivenMoreThanOnceIsNamedOnce) {
  const UpstreamArgs out =
      normalizeUpstreamArgs({"--descheduling-interval=5m", "-v", "2", "--descheduling_interval", "10m", "--v=4",
                             "--dry-run", "--descheduling-interval=1m", "--", "--dry-run"});
  EXPECT_THAT(out.repeated, ElementsAre("--descheduling-interval", "--v"));
}

// Every upstream v0.36 flag kdesched does not implement, in each form pflag accepts: it is taken
// out with its value and named, and the flags around it are untouched.
TEST(UpstreamArgs, EveryUnimplementedUpstreamFlagIsTakenOutWithItsValue) {
  const Args bools = {"--enable-http2",         "--disable-http2-serving",        "--permit-address-sharing",
                      "--permit-port-sharing",  "--otel-fallback-no-op-on-error", "--log-json-split-stream",
                      "--log-text-split-stream"};
  const Args valued = {"--cert-dir",
                       "--tls-sni-cert-key",
                       "--tls-curve-preferences",
                       "--http2-max-streams-per-connection",
                       "--feature-gates",
                       "--otel-collector-endpoint",
                       "--otel-service-name",
                       "--otel-sample-rate",
                       "--otel-trace-namespace",
                       "--otel-transport-ca-cert",
                       "--log-flush-frequency",
                       "--vmodule",
                       "--log-json-info-buffer-size",
                       "--log-text-info-buffer-size"};
  std::vector<std::pair<std::string, Args>> forms;  // flag, one way of writing it
  for (const auto& f : bools)
    for (const Args& form : {Args{f}, Args{f + "=true"}, Args{f + "=false"}}) forms.emplace_back(f, form);
  for (const auto& f : valued)
    for (const Args& form : {Args{f, "x"}, Args{f + "=x"}}) forms.emplace_back(f, form);
  for (const auto& [flag, form] : forms) {
    Args in = {"--dry-run"};
    in.insert(in.end(), form.begin(), form.end());
    in.push_back("--v=3");
    auto out = normalizeUpstreamArgs(in);
    EXPECT_THAT(out.args, ElementsAre("--dry-run", "--v=3")) << form[0];
    EXPECT_THAT(out.ignored, ElementsAre(flag)) << form[0];
  }
}

TEST(UpstreamArgs, PflagShorthandWithEqualsIsRewritten) {
  EXPECT_THAT(normalizeUpstreamArgs({"-v=3"}).args, ElementsAre("--v=3"));
  EXPECT_THAT(normalizeUpstreamArgs({"-v", "4", "--v=2", "-v5"}).args, ElementsAre("-v", "4", "--v=2", "-v5"));
}

// What is not upstream's goes to CLI11 as it came, so a typo is still an error there; a valued
// flag without its value stays too, so CLI11 says the value is missing.
TEST(UpstreamArgs, EverythingElsePassesThroughUnchanged) {
  auto out = normalizeUpstreamArgs(
      {"--polcy-config-file", "p.yaml", "--secure-port", "0", "--tls-cipher-suites=A,B", "--tls-cert-file"});
  EXPECT_THAT(out.args, ElementsAre("--polcy-config-file", "p.yaml", "--secure-port", "0", "--tls-cipher-suites=A,B",
                                    "--tls-cert-file"));
  EXPECT_THAT(out.ignored, IsEmpty());
  // After "--" nothing is a flag.
  out = normalizeUpstreamArgs({"--", "--enable-http2", "-v=3"});
  EXPECT_THAT(out.args, ElementsAre("--", "--enable-http2", "-v=3"));
  EXPECT_THAT(out.ignored, IsEmpty());
  // A flag whose name merely starts like an ignored one is not taken.
  out = normalizeUpstreamArgs({"--enable-http2x", "--cert-directory=a"});
  EXPECT_THAT(out.args, ElementsAre("--enable-http2x", "--cert-directory=a"));
}

// client-go reads KUBE_FEATURE_WatchListClient with strconv.ParseBool; kdesched's own flag wins.
TEST(WatchListSwitch, FlagThenTheClientGoEnvironmentVariableThenOn) {
  std::string warning;
  EXPECT_TRUE(watchListEnabled(std::nullopt, nullptr, warning));
  EXPECT_FALSE(watchListEnabled(std::nullopt, "false", warning));
  EXPECT_FALSE(watchListEnabled(std::nullopt, "0", warning));
  EXPECT_FALSE(watchListEnabled(std::nullopt, "F", warning));
  EXPECT_TRUE(watchListEnabled(std::nullopt, "True", warning));
  EXPECT_TRUE(watchListEnabled(true, "false", warning)) << "--watch-list=true wins";
  EXPECT_FALSE(watchListEnabled(false, "true", warning)) << "--watch-list=false wins";
  EXPECT_TRUE(warning.empty());
  EXPECT_TRUE(watchListEnabled(std::nullopt, "no", warning)) << "not a ParseBool value: the default";
  EXPECT_EQ(warning,
            "KUBE_FEATURE_WatchListClient=\"no\" is not a boolean (true or false); the feature keeps its default");
}

}  // namespace
}  // namespace kdesched::cmd
