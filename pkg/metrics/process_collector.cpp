#include "pkg/metrics/process_collector.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>

#include "pkg/base/log.h"

namespace kdesched::metrics {
namespace {

namespace fs = std::filesystem;

// Which problem was logged already (ProcessCollector::logged_).
enum : unsigned {
  kStatLogged = 1U << 0,
  kBootTimeLogged = 1U << 1,
  kFdsLogged = 1U << 2,
  kMaxFdsLogged = 1U << 3,
  kMaxVsizeLogged = 1U << 4,
  kNetstatLogged = 1U << 5,
  kCollectLogged = 1U << 6,
};

// procfs's parseUint: "unlimited" is the largest uint64, which the Go client exports as a float
// (1.8446744073709552e+19), not as -1.
constexpr std::uint64_t kUnlimited = std::numeric_limits<std::uint64_t>::max();

// procfs files report size 0, so read until EOF rather than by size.
std::optional<std::string> readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

template <typename T>
std::optional<T> parseNumber(std::string_view s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> splitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

struct Stat {
  std::uint64_t utime = 0;
  std::uint64_t stime = 0;
  std::uint64_t starttime = 0;
  std::uint64_t vsize = 0;
  std::int64_t rss = 0;
};

// /proc/<pid>/stat: "pid (comm) state ppid ...". comm may hold spaces and ')', so the fields start
// after the LAST ')'. Counting from state as 0: utime 11, stime 12, starttime 19, vsize 20, rss 21.
std::optional<Stat> parseStat(std::string_view text) {
  size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  auto f = splitWhitespace(text.substr(close + 1));
  if (f.size() < 22) return std::nullopt;
  auto utime = parseNumber<std::uint64_t>(f[11]);
  auto stime = parseNumber<std::uint64_t>(f[12]);
  auto starttime = parseNumber<std::uint64_t>(f[19]);
  auto vsize = parseNumber<std::uint64_t>(f[20]);
  auto rss = parseNumber<std::int64_t>(f[21]);
  if (!utime || !stime || !starttime || !vsize || !rss) return std::nullopt;
  return Stat{*utime, *stime, *starttime, *vsize, *rss};
}

// /proc/stat's "btime <seconds since the epoch>" line.
std::optional<std::uint64_t> parseBootTime(std::string_view text) {
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    auto f = splitWhitespace(line);
    if (f.size() == 2 && f[0] == "btime") return parseNumber<std::uint64_t>(f[1]);
  }
  return std::nullopt;
}

// The soft limit of /proc/<pid>/limits' row `name` ("Max open files   1024   4096   files").
std::optional<std::uint64_t> parseSoftLimit(std::string_view text, std::string_view name) {
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    std::string_view l = line;
    if (l.substr(0, name.size()) != name || l.size() == name.size() ||
        !std::isspace(static_cast<unsigned char>(l[name.size()]))) {
      continue;
    }
    auto f = splitWhitespace(l.substr(name.size()));
    if (f.empty()) return std::nullopt;
    if (f[0] == "unlimited") return kUnlimited;
    return parseNumber<std::uint64_t>(f[0]);
  }
  return std::nullopt;
}

struct Octets {
  double in = 0;
  double out = 0;
};

// /proc/<pid>/net/netstat: pairs of lines, "Proto: Name1 Name2 ..." then "Proto: v1 v2 ...". As
// procfs does: a pair whose field counts differ fails the file; IpExt counters absent count 0.
std::optional<Octets> parseNetstat(std::string_view text) {
  std::istringstream in{std::string(text)};
  Octets o;
  for (std::string names, values; std::getline(in, names);) {
    if (!std::getline(in, values)) values.clear();
    auto n = splitWhitespace(names);
    auto v = splitWhitespace(values);
    if (n.size() != v.size()) return std::nullopt;
    if (n.empty() || n[0] != "IpExt:") continue;
    for (size_t i = 1; i < n.size(); ++i) {
      if (n[i] != "InOctets" && n[i] != "OutOctets") continue;
      auto value = parseNumber<double>(v[i]);
      if (!value) return std::nullopt;
      (n[i] == "InOctets" ? o.in : o.out) = *value;
    }
  }
  return o;
}

prometheus::MetricFamily family(const char* name, const char* help, prometheus::MetricType type, double value) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

prometheus::MetricFamily gauge(const char* name, const char* help, double value) {
  return family(name, help, prometheus::MetricType::Gauge, value);
}

prometheus::MetricFamily counter(const char* name, const char* help, double value) {
  return family(name, help, prometheus::MetricType::Counter, value);
}

// Linux >= 6.2 reports the number of open descriptors as the size of a real procfs fd directory
// (the Go client's fast path, which also does not count the descriptor a listing would open).
std::optional<std::uint64_t> countFds(const fs::path& dir) {
  struct statfs sfs {};
  struct stat st {};
  if (::statfs(dir.c_str(), &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC && ::stat(dir.c_str(), &st) == 0 &&
      st.st_size > 0) {
    return static_cast<std::uint64_t>(st.st_size);
  }
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return std::nullopt;
  std::uint64_t n = 0;
  for (const fs::directory_iterator end; it != end; it.increment(ec)) {
    if (ec) return std::nullopt;
    ++n;
  }
  if (ec) return std::nullopt;
  return n;
}

}  // namespace

ProcSource ProcSource::system() {
  ProcSource s;
  if (long tick = ::sysconf(_SC_CLK_TCK); tick > 0) s.clockTick = tick;
  if (long page = ::sysconf(_SC_PAGESIZE); page > 0) s.pageSize = page;
  return s;
}

ProcessCollector::ProcessCollector(ProcSource source) : source_(std::move(source)) {}

void ProcessCollector::logOnce(unsigned bit, const char* what, const std::string& path) const {
  if (logged_.fetch_or(bit) & bit) return;
  log::debug("cannot read a process metric; the series is left out", {{"metric", what}, {"path", path}});
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  try {
    collectStat(out);
    collectFds(out);
    collectLimits(out);
    collectNetstat(out);
  } catch (const std::exception& e) {
    // Only allocation can throw here; a scrape without process metrics beats a failed scrape.
    logOnce(kCollectLogged, "process_*", e.what());
  }
  return out;
}

void ProcessCollector::collectStat(std::vector<prometheus::MetricFamily>& out) const {
  const fs::path path = fs::path(source_.procRoot) / source_.self / "stat";
  auto text = readFile(path);
  auto stat = text ? parseStat(*text) : std::nullopt;
  if (!stat) {
    logOnce(kStatLogged, "process_cpu_seconds_total", path.string());
    return;
  }
  const double tick = static_cast<double>(source_.clockTick);
  out.push_back(counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                        static_cast<double>(stat->utime + stat->stime) / tick));
  out.push_back(
      gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", static_cast<double>(stat->vsize)));
  out.push_back(gauge("process_resident_memory_bytes", "Resident memory size in bytes.",
                      static_cast<double>(stat->rss) * static_cast<double>(source_.pageSize)));

  const fs::path procStat = fs::path(source_.procRoot) / "stat";
  auto procText = readFile(procStat);
  auto bootTime = procText ? parseBootTime(*procText) : std::nullopt;
  if (!bootTime) {
    logOnce(kBootTimeLogged, "process_start_time_seconds", procStat.string());
    return;
  }
  out.push_back(gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                      static_cast<double>(*bootTime) + static_cast<double>(stat->starttime) / tick));
}

void ProcessCollector::collectFds(std::vector<prometheus::MetricFamily>& out) const {
  const fs::path path = fs::path(source_.procRoot) / source_.self / "fd";
  auto fds = countFds(path);
  if (!fds) {
    logOnce(kFdsLogged, "process_open_fds", path.string());
    return;
  }
  out.push_back(gauge("process_open_fds", "Number of open file descriptors.", static_cast<double>(*fds)));
}

void ProcessCollector::collectLimits(std::vector<prometheus::MetricFamily>& out) const {
  const fs::path path = fs::path(source_.procRoot) / source_.self / "limits";
  auto text = readFile(path);
  if (auto files = text ? parseSoftLimit(*text, "Max open files") : std::nullopt) {
    out.push_back(gauge("process_max_fds", "Maximum number of open file descriptors.", static_cast<double>(*files)));
  } else {
    logOnce(kMaxFdsLogged, "process_max_fds", path.string());
  }
  if (auto as = text ? parseSoftLimit(*text, "Max address space") : std::nullopt) {
    out.push_back(gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.",
                        static_cast<double>(*as)));
  } else {
    logOnce(kMaxVsizeLogged, "process_virtual_memory_max_bytes", path.string());
  }
}

void ProcessCollector::collectNetstat(std::vector<prometheus::MetricFamily>& out) const {
  const fs::path path = fs::path(source_.procRoot) / source_.self / "net" / "netstat";
  auto text = readFile(path);
  auto octets = text ? parseNetstat(*text) : std::nullopt;
  if (!octets) {
    logOnce(kNetstatLogged, "process_network_receive_bytes_total", path.string());
    return;
  }
  out.push_back(counter("process_network_receive_bytes_total",
                        "Number of bytes received by the process over the network.", octets->in));
  out.push_back(counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.",
                        octets->out));
}

}  // namespace kdesched::metrics
