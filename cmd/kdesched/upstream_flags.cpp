#include "cmd/kdesched/upstream_flags.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace kdesched::cmd {
namespace {

// Upstream v0.36's flags (docs/cli/descheduler.md) that kdesched accepts and does not implement.
// Booleans take "--f" or "--f=value"; the others "--f value" or "--f=value", as pflag reads them.
constexpr std::array<std::string_view, 7> kIgnoredBools = {
    "--enable-http2",         "--disable-http2-serving",        "--permit-address-sharing",
    "--permit-port-sharing",  "--otel-fallback-no-op-on-error", "--log-json-split-stream",
    "--log-text-split-stream"};
constexpr std::array<std::string_view, 14> kIgnoredValued = {"--cert-dir",
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

template <std::size_t N>
bool among(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// "--a_b=x_y" -> "--a-b=x_y": pflag's name normalization, never the value.
std::string normalizedName(const std::string& arg) {
  if (arg.size() <= 2 || arg.rfind("--", 0) != 0) return arg;
  std::string out = arg;
  std::replace(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(std::min(out.find('='), out.size())), '_', '-');
  return out;
}

void noteRepeated(UpstreamArgs& out, std::vector<std::string>& seen, const std::string& arg) {
  if (arg.rfind("--", 0) != 0) return;
  std::string name = arg.substr(0, arg.find('='));
  if (std::find(seen.begin(), seen.end(), name) == seen.end()) {
    seen.push_back(std::move(name));
  } else if (std::find(out.repeated.begin(), out.repeated.end(), name) == out.repeated.end()) {
    out.repeated.push_back(std::move(name));
  }
}

}  // namespace

UpstreamArgs normalizeUpstreamArgs(const std::vector<std::string>& args) {
  UpstreamArgs out;
  std::vector<std::string> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string a = normalizedName(args[i]);
    if (a == "--") {  // the rest is positional
      out.args.insert(out.args.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    const std::string_view name = std::string_view(a).substr(0, a.find('='));
    const bool hasValue = name.size() < a.size();
    if (among(kIgnoredBools, name)) {
      out.ignored.emplace_back(name);
      continue;
    }
    if (among(kIgnoredValued, name) && (hasValue || i + 1 < args.size())) {
      out.ignored.emplace_back(name);
      if (!hasValue) ++i;
      continue;
    }
    // pflag reads "-v=3" as shorthand v with value 3; CLI11 would take "=3" as the value.
    std::string kept = a.rfind("-v=", 0) == 0 ? "--v=" + a.substr(3) : a;
    noteRepeated(out, seen, kept == "-v" ? "--v" : kept);
    out.args.push_back(std::move(kept));
  }
  return out;
}

std::optional<bool> clientFeatureGate(std::string_view name, const char* value, std::string& error) {
  if (!value) return std::nullopt;
  const std::string_view v(value);
  for (std::string_view t : {"1", "t", "T", "TRUE", "true", "True"})
    if (v == t) return true;
  for (std::string_view f : {"0", "f", "F", "FALSE", "false", "False"})
    if (v == f) return false;
  error = "KUBE_FEATURE_" + std::string(name) + "=\"" + std::string(v) +
          "\" is not a boolean (true or false); the feature keeps its default";
  return std::nullopt;
}

bool watchListEnabled(std::optional<bool> flag, const char* env, std::string& warning) {
  const std::optional<bool> gate = clientFeatureGate("WatchListClient", env, warning);
  if (flag) return *flag;
  return gate.value_or(true);
}

}  // namespace kdesched::cmd
