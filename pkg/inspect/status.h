// `kubectl kdesched status`: what the installed daemon is doing, read from outside through the
// API server only: the chart's workload, the leader-election Lease, the daemon's /metrics through
// the API server's proxy (the Lease holder's pod when the holder is a pod there, else the chart's
// Service), and the recent Events kdesched recorded.
// Each part is read on its own: one that cannot be read says why, and the others are still shown.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pkg/api/types.h"
#include "pkg/inspect/install.h"
#include "pkg/kube/client.h"

namespace kdesched::inspect {

struct StatusOptions {
  InstallQuery install;
  std::size_t events = 10;  // the most recent Events shown
};

// Each part: found (the fields), absent (not there, and `absent` says why that may be fine), or
// an error (it could not be read).
struct LeaseStatus {
  std::string ns, name;
  bool found = false;
  std::string holder, renewTime;
  std::optional<double> ageSeconds;  // since renewTime
  int durationSeconds = 0, transitions = 0;
  bool expired = false;  // not renewed within its duration: no replica is leading
  std::string absent, error;
};

struct MetricsStatus {
  bool found = false;
  std::string via;  // the proxy path read (pods/... or services/...)
  std::string version;
  double cycles = 0;  // descheduler_loop_duration_seconds_count
  std::optional<double> lastCycleAgeSeconds;
  std::map<std::string, double> evictions, refused, suppressed;  // by result, by reason, by reason
  std::map<std::string, double> cacheObjects;                    // by kind
  std::vector<std::string> staleCaches;
  std::string absent, error;
};

struct EventRow {
  std::string time, ns, pod, type, reason, note, instance;
  std::optional<double> ageSeconds;
};

struct DaemonStatus {
  std::string ns;
  std::optional<Workload> workload;
  std::string workloadError;
  LeaseStatus lease;
  MetricsStatus metrics;
  std::vector<EventRow> events;  // newest first, at most StatusOptions::events
  std::size_t eventsTotal = 0;
  std::string eventsError;
  // Nothing of kdesched was found in the namespace (no workload, Lease or Service).
  bool notInstalled() const;
  // Every part that is there was read.
  bool complete() const;
};

// `now`: seconds since the epoch, for the ages.
DaemonStatus readStatus(kube::Client& client, const StatusOptions& options, api::Timestamp now);

// Reads the figures of a /metrics answer into `m`.
void readMetrics(std::string_view exposition, api::Timestamp now, MetricsStatus& m);

// "4s", "3m10s", "5h2m", "3d4h": kubectl's ages.
std::string humanAge(double seconds);

void writeStatusTable(const DaemonStatus& s, bool wide, std::ostream& out);
nlohmann::ordered_json statusJson(const DaemonStatus& s);

}  // namespace kdesched::inspect
