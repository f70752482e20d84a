// The status as a short report for people (table) and as a stable object for scripts (json).
#include <sstream>

#include "pkg/inspect/status.h"

namespace kdesched::inspect {
namespace {

using OJson = nlohmann::ordered_json;

std::string figure(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// "success 3, error 1", or "none".
std::string byLabel(const std::map<std::string, double>& m) {
  std::string out;
  for (const auto& [k, v] : m)
    if (v != 0) out += (out.empty() ? "" : ", ") + (k.empty() ? "-" : k) + " " + figure(v);
  return out.empty() ? "none" : out;
}

std::string cut(const std::string& s, std::size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

void writeWorkload(const DaemonStatus& s, std::ostream& out) {
  out << "kdesched in namespace " << s.ns << ": ";
  if (!s.workloadError.empty()) {
    out << "error: " << s.workloadError << "\n";
  } else if (!s.workload) {
    out << "no Deployment or CronJob " << describeQuery({s.ns, ""}) << "\n";
  } else if (s.workload->kind == "Deployment") {
    out << "Deployment " << s.workload->name << ", " << s.workload->readyReplicas << "/" << s.workload->replicas
        << " ready, leader election " << (s.workload->leaderElect ? "on" : "off") << "\n";
  } else {
    out << "CronJob " << s.workload->name << ", last scheduled "
        << (s.workload->lastScheduleTime.empty() ? "never" : s.workload->lastScheduleTime) << ", last succeeded "
        << (s.workload->lastSuccessTime.empty() ? "never" : s.workload->lastSuccessTime) << "\n";
  }
}

void writeLease(const LeaseStatus& l, std::ostream& out) {
  out << "Lease:   ";
  if (!l.error.empty()) {
    out << "error: " << l.error << "\n";
  } else if (!l.found) {
    out << l.absent << "\n";
  } else {
    out << l.ns << "/" << l.name << " held by " << (l.holder.empty() ? "nobody" : l.holder) << ", renewed "
        << (l.ageSeconds ? humanAge(*l.ageSeconds) + " ago" : "never") << " (duration " << l.durationSeconds << "s, "
        << l.transitions << " transitions)" << (l.expired ? ": EXPIRED, no replica is leading" : "") << "\n";
  }
}

void writeMetrics(const MetricsStatus& m, bool wide, std::ostream& out) {
  out << "Metrics: ";
  if (!m.error.empty()) {
    out << "error: " << m.error << "\n";
    return;
  }
  if (!m.found) {
    out << m.absent << "\n";
    return;
  }
  out << figure(m.cycles) << " cycles, last successful "
      << (m.lastCycleAgeSeconds ? humanAge(*m.lastCycleAgeSeconds) + " ago" : "never")
      << (m.version.empty() ? "" : ", version " + m.version) << "\n";
  out << "  evictions: " << byLabel(m.evictions) << "\n";
  out << "  refused:   " << byLabel(m.refused) << "\n";
  out << "  held back: " << byLabel(m.suppressed) << "\n";
  out << "  cache:     " << (m.staleCaches.empty() ? std::string("fresh") : "STALE: " + [&] {
    std::string r;
    for (const auto& c : m.staleCaches) r += (r.empty() ? "" : ", ") + c;
    return r;
  }());
  if (wide) out << " (" << byLabel(m.cacheObjects) << ")";
  out << "\n";
  if (wide) out << "  read at:   " << m.via << "\n";
}

void writeEvents(const DaemonStatus& s, bool wide, std::ostream& out) {
  if (!s.eventsError.empty()) {
    out << "Events:  error: " << s.eventsError << "\n";
    return;
  }
  if (s.events.empty()) {
    out << "Events:  none by kdesched (Events live an hour by default)\n";
    return;
  }
  out << "Events:  the " << s.events.size() << " most recent of " << s.eventsTotal << "\n";
  std::vector<std::vector<std::string>> rows{{"LAST SEEN", "NAMESPACE", "POD", "TYPE", "REASON", "NOTE"}};
  for (const EventRow& e : s.events)
    rows.push_back({e.ageSeconds ? humanAge(*e.ageSeconds) : "<unknown>", e.ns, e.pod, e.type, e.reason,
                    wide ? e.note : cut(e.note, 80)});
  std::vector<std::size_t> width(rows[0].size());
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (const auto& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < r.size(); ++i)
      line += i + 1 == r.size() ? r[i] : r[i] + std::string(width[i] - r[i].size() + 2, ' ');
    out << line << "\n";
  }
}

OJson optionalAge(const std::optional<double>& a) { return a ? OJson(*a) : OJson(nullptr); }

// A part's state: "found", "absent" (with why) or "error" (with the message).
void state(OJson& j, bool found, const std::string& absent, const std::string& error) {
  j["state"] = !error.empty() ? "error" : found ? "found" : "absent";
  if (!error.empty()) j["error"] = error;
  if (error.empty() && !found) j["reason"] = absent;
}

}  // namespace

void writeStatusTable(const DaemonStatus& s, bool wide, std::ostream& out) {
  writeWorkload(s, out);
  writeLease(s.lease, out);
  writeMetrics(s.metrics, wide, out);
  writeEvents(s, wide, out);
}

OJson statusJson(const DaemonStatus& s) {
  OJson j;
  j["namespace"] = s.ns;
  if (s.workload) {
    const Workload& w = *s.workload;
    j["workload"] = {{"kind", w.kind},
                     {"name", w.name},
                     {"replicas", w.replicas},
                     {"readyReplicas", w.readyReplicas},
                     {"leaderElect", w.leaderElect},
                     {"lastScheduleTime", w.lastScheduleTime},
                     {"lastSuccessfulTime", w.lastSuccessTime}};
  } else {
    j["workload"] = nullptr;
  }
  if (!s.workloadError.empty()) j["workloadError"] = s.workloadError;
  OJson lease{{"namespace", s.lease.ns}, {"name", s.lease.name}};
  state(lease, s.lease.found, s.lease.absent, s.lease.error);
  if (s.lease.found) {
    lease["holder"] = s.lease.holder;
    lease["renewTime"] = s.lease.renewTime;
    lease["ageSeconds"] = optionalAge(s.lease.ageSeconds);
    lease["leaseDurationSeconds"] = s.lease.durationSeconds;
    lease["leaseTransitions"] = s.lease.transitions;
    lease["expired"] = s.lease.expired;
  }
  j["lease"] = lease;
  OJson metrics;
  state(metrics, s.metrics.found, s.metrics.absent, s.metrics.error);
  if (!s.metrics.via.empty()) metrics["path"] = s.metrics.via;
  if (s.metrics.found) {
    metrics["version"] = s.metrics.version;
    metrics["cycles"] = s.metrics.cycles;
    metrics["lastSuccessfulCycleAgeSeconds"] = optionalAge(s.metrics.lastCycleAgeSeconds);
    metrics["evictions"] = s.metrics.evictions;
    metrics["refused"] = s.metrics.refused;
    metrics["suppressed"] = s.metrics.suppressed;
    metrics["cacheObjects"] = s.metrics.cacheObjects;
    metrics["staleCaches"] = s.metrics.staleCaches;
  }
  j["metrics"] = metrics;
  OJson events = OJson::array();
  for (const EventRow& e : s.events)
    events.push_back({{"time", e.time},
                      {"ageSeconds", optionalAge(e.ageSeconds)},
                      {"namespace", e.ns},
                      {"pod", e.pod},
                      {"type", e.type},
                      {"reason", e.reason},
                      {"note", e.note},
                      {"reportingInstance", e.instance}});
  j["events"] = events;
  j["eventsTotal"] = s.eventsTotal;
  if (!s.eventsError.empty()) j["eventsError"] = s.eventsError;
  return j;
}

}  // namespace kdesched::inspect
