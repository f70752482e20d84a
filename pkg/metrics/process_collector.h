// The process_* series the Go client (client_golang v1.23.2, the one upstream descheduler v0.36
// links) exports on Linux, read from procfs the way its processCollector reads them, so operators'
// alerts on memory, CPU and restarts keep working when kdesched replaces upstream.
//
// Each Collect() reads the files afresh. A file that cannot be read or parsed drops only the series
// it feeds (as the Go client does without ReportErrors) and is logged once at debug level; Collect()
// never throws. Safe to call from several threads at once.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <atomic>
#include <string>
#include <vector>

namespace kdesched::metrics {

struct ProcSource {
  std::string procRoot = "/proc";  // holds stat (btime) and the process directory
  std::string self = "self";       // the process directory under procRoot
  // Divisor of stat's utime, stime and starttime. The Go client hard-codes 100 (USER_HZ, what
  // every Linux build reports); sysconf says the same here.
  long clockTick = 100;
  long pageSize = 4096;

  // The running process: /proc/self with sysconf's clock tick and page size.
  static ProcSource system();
};

class ProcessCollector : public prometheus::Collectable {
 public:
  explicit ProcessCollector(ProcSource source = ProcSource::system());
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  // Bits of problems already logged, so a missing file costs one debug line, not one per scrape.
  void logOnce(unsigned bit, const char* what, const std::string& path) const;
  void collectStat(std::vector<prometheus::MetricFamily>& out) const;
  void collectFds(std::vector<prometheus::MetricFamily>& out) const;
  void collectLimits(std::vector<prometheus::MetricFamily>& out) const;
  void collectNetstat(std::vector<prometheus::MetricFamily>& out) const;

  ProcSource source_;
  mutable std::atomic<unsigned> logged_{0};
};

}  // namespace kdesched::metrics
