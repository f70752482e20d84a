// Upstream descheduler's command line as pflag reads it, turned into what CLI11 parses: the
// upstream flags kdesched does not implement are taken out (and named, for one warning), and
// pflag's "-v=3" shorthand form becomes "--v=3". Everything else passes through unchanged, so
// CLI11 still reports a flag neither upstream nor kdesched knows.
#pragma once

#include <string>
#include <vector>

namespace kdesched::cmd {

struct UpstreamArgs {
  std::vector<std::string> args;     // for CLI11, without argv[0]
  std::vector<std::string> ignored;  // the upstream flags removed, in order, as "--name"
};

// `args` excludes argv[0]. A valued flag given as its last argument without a value is left in
// place, so CLI11 reports the missing value.
UpstreamArgs normalizeUpstreamArgs(const std::vector<std::string>& args);

}  // namespace kdesched::cmd
