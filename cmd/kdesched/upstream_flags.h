// Upstream descheduler's command line as pflag reads it, turned into what CLI11 parses: the
// upstream flags kdesched does not implement are taken out (and named, for one warning), a flag
// name's underscores become dashes (component-base's WordSepNormalizeFunc: "--logging_format" is
// "--logging-format"), and pflag's "-v=3" shorthand form becomes "--v=3". Everything else passes
// through unchanged, so CLI11 still reports a flag neither upstream nor kdesched knows. A flag
// given more than once is named in `repeated` (the daemon's parser keeps the last value, as
// pflag does; a list flag such as --tls-cipher-suites keeps them all).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kdesched::cmd {

struct UpstreamArgs {
  std::vector<std::string> args;      // for CLI11, without argv[0]
  std::vector<std::string> ignored;   // the upstream flags removed, in order, as "--name"
  std::vector<std::string> repeated;  // flags kept that were given more than once, as "--name", in order
};

// `args` excludes argv[0]. A valued flag given as its last argument without a value is left in
// place, so CLI11 reports the missing value.
UpstreamArgs normalizeUpstreamArgs(const std::vector<std::string>& args);

// A client-go feature gate set from the environment as client-go reads it (features/envvar.go):
// KUBE_FEATURE_<name>, a value strconv.ParseBool takes ("1", "t", "T", "TRUE", "true", "True" and
// the false ones). `value` null (unset): nullopt; not a boolean: nullopt and `error` says why.
std::optional<bool> clientFeatureGate(std::string_view name, const char* value, std::string& error);

// The watch-list switch: --watch-list when given, else KUBE_FEATURE_WatchListClient, else on
// (client-go's default since 1.35). `env` is that variable's value (null: unset).
bool watchListEnabled(std::optional<bool> flag, const char* env, std::string& warning);

}  // namespace kdesched::cmd
