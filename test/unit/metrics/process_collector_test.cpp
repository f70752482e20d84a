#include "pkg/metrics/process_collector.h"

#include <gtest/gtest.h>

#include <prometheus/text_serializer.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/base/log.h"
#include "pkg/metrics/metrics.h"

namespace kdesched::metrics {
namespace {

namespace fs = std::filesystem;

// A comm holding a space and a ')': only a parser that splits at the LAST ')' finds utime=250,
// stime=130, starttime=123456, vsize=104857600, rss=2560 where they are.
const char* const kStat =
    "4242 (kd esched) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 130 0 0 20 0 12 0 123456 104857600 2560 "
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n";
const char* const kProcStat = "cpu  1 2 3 4 5 6 7 0 0 0\nintr 12345 0 0\nctxt 999\nbtime 1700000000\nprocesses 4242\n";
const char* const kLimitsHeader = "Limit                     Soft Limit           Hard Limit           Units     \n";
const char* const kNetstat =
    "TcpExt: SyncookiesSent SyncookiesRecv\nTcpExt: 0 0\n"
    "IpExt: InNoRoutes InOctets OutOctets InMcastOctets\nIpExt: 0 881677973 380389379 0\n";

std::string limits(const std::string& openFiles, const std::string& addressSpace) {
  return std::string(kLimitsHeader) +
         "Max cpu time              unlimited            unlimited            seconds   \n" +
         "Max open files            " + openFiles + "                 1048576              files     \n" +
         "Max address space         " + addressSpace + "            unlimited            bytes     \n";
}

// A fake procfs in a temporary directory: <root>/stat and <root>/4242/{stat,limits,fd/,net/netstat}.
class FakeProc {
 public:
  FakeProc() {
    static int serial = 0;
    root_ =
        fs::temp_directory_path() / ("kdesched-proc-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    fs::create_directories(root_ / "4242");
  }
  ~FakeProc() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeProc& file(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
    return *this;
  }
  FakeProc& fds(int n) {
    fs::create_directories(root_ / "4242/fd");
    for (int i = 0; i < n; ++i) std::ofstream(root_ / "4242/fd" / std::to_string(i)) << "";
    return *this;
  }
  // Every file the collector reads, with the values above.
  FakeProc& complete() {
    return file("stat", kProcStat)
        .file("4242/stat", kStat)
        .file("4242/limits", limits("1024", "8589934592"))
        .file("4242/net/netstat", kNetstat)
        .fds(3);
  }
  ProcSource source(long clockTick = 200, long pageSize = 16384) const {
    return ProcSource{root_.string(), "4242", clockTick, pageSize};
  }

 private:
  fs::path root_;
};

// name -> value of every family the collector returned.
std::map<std::string, double> collect(const ProcSource& source) {
  std::map<std::string, double> out;
  for (const auto& f : ProcessCollector(source).Collect()) {
    EXPECT_EQ(f.metric.size(), 1U) << f.name;
    const auto& m = f.metric.at(0);
    out[f.name] = f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
  }
  return out;
}

std::optional<double> valueOf(const std::map<std::string, double>& m, const std::string& name) {
  auto it = m.find(name);
  return it == m.end() ? std::nullopt : std::optional<double>(it->second);
}

TEST(ProcessCollector, ReadsEverySeriesWithTheInjectedClockTickAndPageSize) {
  FakeProc proc;
  proc.complete();
  auto m = collect(proc.source(200, 16384));
  EXPECT_EQ(m.size(), 9U);
  EXPECT_DOUBLE_EQ(m["process_cpu_seconds_total"], (250.0 + 130.0) / 200);
  EXPECT_DOUBLE_EQ(m["process_virtual_memory_bytes"], 104857600);
  EXPECT_DOUBLE_EQ(m["process_resident_memory_bytes"], 2560.0 * 16384);
  EXPECT_DOUBLE_EQ(m["process_start_time_seconds"], 1700000000 + 123456.0 / 200);
  EXPECT_DOUBLE_EQ(m["process_open_fds"], 3);
  EXPECT_DOUBLE_EQ(m["process_max_fds"], 1024);
  EXPECT_DOUBLE_EQ(m["process_virtual_memory_max_bytes"], 8589934592);
  EXPECT_DOUBLE_EQ(m["process_network_receive_bytes_total"], 881677973);
  EXPECT_DOUBLE_EQ(m["process_network_transmit_bytes_total"], 380389379);
}

// procfs turns "unlimited" into the largest uint64 and the Go client exports it as a float.
TEST(ProcessCollector, UnlimitedIsTheLargestUint64AsTheGoClientReportsIt) {
  FakeProc proc;
  proc.file("4242/limits", limits("unlimited", "unlimited"));
  auto m = collect(proc.source());
  EXPECT_EQ(valueOf(m, "process_max_fds"), 18446744073709551615.0);
  EXPECT_EQ(valueOf(m, "process_virtual_memory_max_bytes"), 18446744073709551615.0);
}

struct Broken {
  std::string name;
  std::string rel;   // a file of the complete fake procfs
  std::string text;  // what it holds instead; "-" removes it
  std::vector<std::string> missing;
};

class ProcessCollectorBrokenFile : public ::testing::TestWithParam<Broken> {};

TEST_P(ProcessCollectorBrokenFile, LeavesOutOnlyTheSeriesItFeeds) {
  const auto& c = GetParam();
  FakeProc proc;
  proc.complete();
  if (c.text == "-") {
    fs::remove_all(fs::path(proc.source().procRoot) / c.rel);
  } else {
    proc.file(c.rel, c.text);
  }
  auto m = collect(proc.source());
  for (const auto& name : c.missing) EXPECT_FALSE(valueOf(m, name)) << name;
  EXPECT_EQ(m.size(), 9U - c.missing.size());
}

const std::vector<std::string> kFromStat = {"process_cpu_seconds_total", "process_virtual_memory_bytes",
                                            "process_resident_memory_bytes", "process_start_time_seconds"};
const std::vector<std::string> kFromNetstat = {"process_network_receive_bytes_total",
                                               "process_network_transmit_bytes_total"};

INSTANTIATE_TEST_SUITE_P(
    Cases, ProcessCollectorBrokenFile,
    ::testing::Values(
        Broken{"NoStat", "4242/stat", "-", kFromStat},
        Broken{"StatWithoutParen", "4242/stat",
               "4242 kdesched S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
               "17 18 19 20 21 22 23\n",
               kFromStat},
        Broken{"StatTooShort", "4242/stat", "4242 (kdesched) S 1 4242 4242 0 -1 4194560 100 0 0 0 250\n", kFromStat},
        Broken{"StatNotANumber", "4242/stat",
               "4242 (kd) S 1 4242 4242 0 -1 4194560 100 0 0 0 25x 130 0 0 20 0 12 0 123456 1048 2560\n", kFromStat},
        Broken{"NoBootTime", "stat", "cpu  1 2 3\n", {"process_start_time_seconds"}},
        Broken{"NoProcStat", "stat", "-", {"process_start_time_seconds"}},
        Broken{"NoFdDirectory", "4242/fd", "-", {"process_open_fds"}},
        Broken{"NoLimits", "4242/limits", "-", {"process_max_fds", "process_virtual_memory_max_bytes"}},
        Broken{"OpenFilesNotANumber", "4242/limits", limits("lots", "unlimited"), {"process_max_fds"}},
        Broken{"NoAddressSpaceRow",
               "4242/limits",
               std::string(kLimitsHeader) + "Max open files  1024  4096  files\n",
               {"process_virtual_memory_max_bytes"}},
        Broken{"NoNetstat", "4242/net/netstat", "-", kFromNetstat},
        Broken{"NetstatFieldCountsDiffer", "4242/net/netstat", "IpExt: InOctets\nIpExt: 1 2\n", kFromNetstat}),
    [](const auto& info) { return info.param.name; });

// procfs leaves absent IpExt counters at zero rather than failing the file.
TEST(ProcessCollector, NetstatWithoutIpExtCountsZero) {
  FakeProc proc;
  proc.file("4242/net/netstat", "TcpExt: SyncookiesSent\nTcpExt: 7\n");
  auto m = collect(proc.source());
  EXPECT_EQ(valueOf(m, "process_network_receive_bytes_total"), 0.0);
  EXPECT_EQ(valueOf(m, "process_network_transmit_bytes_total"), 0.0);
}

TEST(ProcessCollector, NoProcfsAtAllCollectsNothingAndLogsEachProblemOnce) {
  std::vector<std::string> lines;
  log::setWriter([&lines](std::string_view line) { lines.emplace_back(line); });
  log::setLevel(log::Level::Debug);
  ProcessCollector c(ProcSource{"/nonexistent/kdesched-proc", "self", 100, 4096});
  EXPECT_TRUE(c.Collect().empty());
  EXPECT_TRUE(c.Collect().empty());
  log::setWriter(nullptr);
  log::setLevel(log::Level::Info);
  // stat, fd, limits (two series), netstat; /proc/stat is not read without the process's stat.
  EXPECT_EQ(lines.size(), 5U);
  for (const auto& l : lines) EXPECT_NE(l.find("/nonexistent/kdesched-proc/self/"), std::string::npos) << l;
}

// What Prometheus scrapes: HELP and TYPE as the Go client writes them, one sample each.
TEST(ProcessCollector, SerializesWithTheGoClientsHelpAndTypes) {
  FakeProc proc;
  proc.complete();
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, ProcessCollector(proc.source(100, 4096)).Collect());
  const std::string text = out.str();
  for (const char* expected : {
           "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
           "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 3.8\n",
           "# HELP process_virtual_memory_bytes Virtual memory size in bytes.\n"
           "# TYPE process_virtual_memory_bytes gauge\nprocess_virtual_memory_bytes 104857600\n",
           "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
           "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 10485760\n",
           "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
           "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds 1700001234.56\n",
           "# HELP process_open_fds Number of open file descriptors.\n"
           "# TYPE process_open_fds gauge\nprocess_open_fds 3\n",
           "# HELP process_max_fds Maximum number of open file descriptors.\n"
           "# TYPE process_max_fds gauge\nprocess_max_fds 1024\n",
           "# HELP process_virtual_memory_max_bytes Maximum amount of virtual memory available in bytes.\n"
           "# TYPE process_virtual_memory_max_bytes gauge\nprocess_virtual_memory_max_bytes 8589934592\n",
           "# HELP process_network_receive_bytes_total Number of bytes received by the process over the network.\n"
           "# TYPE process_network_receive_bytes_total counter\nprocess_network_receive_bytes_total 881677973\n",
           "# HELP process_network_transmit_bytes_total Number of bytes sent by the process over the network.\n"
           "# TYPE process_network_transmit_bytes_total counter\nprocess_network_transmit_bytes_total 380389379\n",
       }) {
    EXPECT_NE(text.find(expected), std::string::npos) << expected << "\nin:\n" << text;
  }
}

// The daemon's /metrics body (Metrics::serialize) carries the process series beside the others.
TEST(ProcessCollector, MetricsServesTheProcessSeries) {
  FakeProc proc;
  proc.complete();
  const std::string text = Metrics("0.1.0", {}, proc.source(100, 4096)).serialize();
  EXPECT_NE(text.find("descheduler_build_info{"), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_resident_memory_bytes 10485760\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nprocess_start_time_seconds 1700001234.56\n"), std::string::npos) << text;
}

// The real /proc of this test process: every series present and plausible.
TEST(ProcessCollector, ReadsThisProcess) {
  auto m = collect(ProcSource::system());
  EXPECT_EQ(m.size(), 9U);
  EXPECT_GT(m["process_resident_memory_bytes"], 0);
  EXPECT_GE(m["process_virtual_memory_bytes"], m["process_resident_memory_bytes"]);
  EXPECT_GT(m["process_start_time_seconds"], 1.5e9);
  EXPECT_GE(m["process_open_fds"], 3);
  EXPECT_GE(m["process_max_fds"], m["process_open_fds"]);
}

}  // namespace
}  // namespace kdesched::metrics
