#include "pkg/plan/plan.h"

#include "pkg/moves/advisor.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

#include "pkg/api/object.h"
#include "pkg/cluster/loader.h"
#include "pkg/engine/engine.h"
#include "pkg/evictor/budget_gate.h"
#include "pkg/plan/usage_input.h"

namespace kdesched::plan {
namespace {

using Row = std::vector<std::string>;

void writeTable(std::ostream& out, const Row& header, const std::vector<Row>& rows) {
  std::vector<std::size_t> width(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) width[i] = header[i].size();
  for (const auto& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  auto line = [&](const Row& r) {
    std::string s;
    for (std::size_t i = 0; i < r.size(); ++i) {
      s += r[i];
      if (i + 1 < r.size()) s += std::string(width[i] - r[i].size() + 2, ' ');
    }
    out << s << "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
}

std::string plural(std::size_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

struct PlanData {
  const framework::Explainer* explain;  // null: no --explain
  const evictor::PlanSink& sink;
  const framework::CycleResult& cycle;
  const cluster::LoadReport& report;
  const cluster::Snapshot& snapshot;
  const engine::Engine& engine;
  const evictor::BudgetGate* budgets;  // null: the policy has none
};

const api::Pod* findPod(const cluster::Snapshot& snapshot, const framework::Explainer::Asked& a) {
  for (const api::Pod* p : snapshot.pods())
    if (p->name == a.name && p->ns.view() == a.ns) return p;
  return nullptr;
}

// Each asked pod: its node, then one line per profile and plugin step, in the order they happened.
void renderExplainTable(const PlanData& d, std::ostream& out) {
  if (d.budgets) {
    const auto active = d.budgets->active();
    if (active.empty()) out << "\nNo disruption budget is active.\n";
    if (!active.empty()) {
      out << "\nActive disruption budgets:\n";
      std::vector<Row> rows;
      for (const auto& b : active)
        rows.push_back({b.name, b.until.empty() ? "always" : b.until + " (" + b.timeZone + ")", b.allowanceText,
                        std::to_string(b.used), std::to_string(b.allowance - std::min(b.allowance, b.used))});
      writeTable(out, {"BUDGET", "ACTIVE UNTIL", "MAX EVICTIONS", "USED", "LEFT"}, rows);
    }
  }
  for (const auto& a : d.explain->asked()) {
    out << "\nExplain " << a.ns << "/" << a.name;
    const api::Pod* pod = findPod(d.snapshot, a);
    if (!pod) {
      out << ": no such pod in the cluster state the plan read\n";
      continue;
    }
    out << " (node " << (pod->nodeName.empty() ? "<none>" : pod->nodeName.str()) << "):\n";
    std::vector<Row> rows;
    for (const auto& s : a.steps)
      rows.push_back({s.profile.empty() ? "-" : s.profile, s.plugin.empty() ? "-" : s.plugin,
                      std::string(framework::toString(s.outcome)), s.by.empty() ? "-" : s.by, s.why});
    writeTable(out, {"PROFILE", "PLUGIN", "OUTCOME", "BY", "WHY"}, rows);
  }
}

nlohmann::ordered_json explainJson(const PlanData& d) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const auto& a : d.explain->asked()) {
    const api::Pod* pod = findPod(d.snapshot, a);
    nlohmann::ordered_json e{{"namespace", a.ns}, {"name", a.name}, {"found", pod != nullptr}};
    e["node"] = pod && !pod->nodeName.empty() ? nlohmann::ordered_json(pod->nodeName.str()) : nullptr;
    e["steps"] = nlohmann::ordered_json::array();
    for (const auto& s : a.steps)
      e["steps"].push_back({{"profile", s.profile},
                            {"plugin", s.plugin},
                            {"outcome", std::string(framework::toString(s.outcome))},
                            {"by", s.by},
                            {"kind", s.kind},
                            {"why", s.why}});
    j.push_back(std::move(e));
  }
  return j;
}

void renderTable(const PlanData& d, std::ostream& out) {
  if (d.sink.evictions().empty()) {
    out << "No evictions.\n";
  } else {
    std::vector<Row> rows;
    for (const auto& e : d.sink.evictions())
      rows.push_back({e.pod->ns.str(), e.pod->name, e.node, e.plugin, e.landing.column(),
                      e.move             ? e.reason + "; moved by " + e.move->rollout
                      : e.noMove.empty() ? e.reason
                                         : e.reason + "; no move: " + e.noMove});
    writeTable(out, {"NAMESPACE", "POD", "NODE", "PLUGIN", "LANDS ON", "REASON"}, rows);
  }
  if (!d.sink.refusals().empty()) {
    out << "\nRefused (a plugin chose the pod, the evictor said no):\n";
    std::vector<Row> rows;
    for (const auto& r : d.sink.refusals())
      rows.push_back(
          {r.wanted.pod->ns.str(), r.wanted.pod->name, r.wanted.node, r.wanted.plugin, r.result.by, r.result.detail});
    writeTable(out, {"NAMESPACE", "POD", "NODE", "PLUGIN", "REFUSED BY", "WHY"}, rows);
  }
  for (const auto& w : d.report.warnings) out << "\nwarning: " << w;
  if (!d.report.warnings.empty()) out << "\n";
  out << "\n";
  if (d.cycle.skipped) out << "Cycle skipped: " << d.cycle.skipReason << "\n";
  std::size_t skippedObjects = 0;
  for (const auto& [k, n] : d.report.skipped) skippedObjects += n;
  out << "Summary: " << plural(d.sink.evictions().size(), "eviction") << ", " << d.sink.refusals().size()
      << " refused; " << plural(d.snapshot.nodes().size(), "node") << " (" << d.cycle.nodes << " in the cycle), "
      << plural(d.snapshot.podCount(), "pod") << ", " << plural(d.snapshot.pdbs().size(), "PDB") << "; "
      << plural(d.engine.profiles.size(), "profile");
  if (skippedObjects) {
    out << "; skipped";
    bool first = true;
    for (const auto& [k, n] : d.report.skipped) {
      out << (first ? " " : ", ") << n << " " << k;
      first = false;
    }
  }
  out << "\n";
  if (d.explain) renderExplainTable(d, out);
}

// {"expected": "node2", "fits": [up to 3, best first], "fitCount": 5, "fitCountExact": true} (false:
// the look stopped early in a big cluster, there may be more), or {"expected": null,
// "fitsNowhere": true, "reasons": {"insufficient cpu": 2, ...}} (nodes by the check they fail).
nlohmann::ordered_json landingJson(const framework::Landing& l) {
  nlohmann::ordered_json j;
  if (l.fitsNowhere()) {
    j["expected"] = nullptr;
    j["fitsNowhere"] = true;
    j["reasons"] = nlohmann::ordered_json::object();
    for (const auto& [check, n] : l.unfit) j["reasons"][check] = n;
    return j;
  }
  j["expected"] = l.expected();
  j["fits"] = l.fits;
  j["fitCount"] = l.fitCount;
  j["fitCountExact"] = l.fitCountExact;
  return j;
}

// A move: the Deployment it restarts and the rollout that makes.
nlohmann::ordered_json moveJson(const evictor::MovePlan& m) {
  return {{"deployment", m.deployment},
          {"namespace", m.ns},
          {"rollout", m.rollout},
          {"deadlineSeconds", m.deadlineSeconds}};
}

void renderJson(const PlanData& d, std::ostream& out) {
  nlohmann::ordered_json j;
  j["evictions"] = nlohmann::ordered_json::array();
  for (const auto& e : d.sink.evictions()) {
    nlohmann::ordered_json row{{"namespace", e.pod->ns.str()},
                               {"name", e.pod->name},
                               {"node", e.node},
                               {"plugin", e.plugin},
                               {"profile", e.profile},
                               {"reason", e.reason},
                               {"landing", landingJson(e.landing)}};
    // Only with moves on: plans without them stay as they were.
    if (e.move) row["move"] = moveJson(*e.move);
    if (!e.noMove.empty()) row["noMove"] = e.noMove;
    j["evictions"].push_back(std::move(row));
  }
  j["refused"] = nlohmann::ordered_json::array();
  for (const auto& r : d.sink.refusals())
    j["refused"].push_back({{"namespace", r.wanted.pod->ns.str()},
                            {"name", r.wanted.pod->name},
                            {"node", r.wanted.node},
                            {"plugin", r.wanted.plugin},
                            {"profile", r.wanted.profile},
                            {"by", r.result.by},
                            {"kind", std::string(framework::toString(r.result.refusal))},
                            {"detail", r.result.detail},
                            {"reason", r.wanted.reason}});
  nlohmann::ordered_json summary;
  summary["evictions"] = d.sink.evictions().size();
  summary["refused"] = d.sink.refusals().size();
  summary["nodes"] = d.snapshot.nodes().size();
  summary["cycleNodes"] = d.cycle.nodes;
  summary["pods"] = d.snapshot.podCount();
  summary["pdbs"] = d.snapshot.pdbs().size();
  summary["profiles"] = d.engine.profiles.size();
  summary["skipped"] = d.cycle.skipped;
  if (d.cycle.skipped) summary["skipReason"] = d.cycle.skipReason;
  summary["loaded"] = d.report.loaded;
  summary["skippedObjects"] = d.report.skipped;
  summary["warnings"] = d.report.warnings;
  j["summary"] = summary;
  if (d.explain) j["explain"] = explainJson(d);
  if (d.explain && d.budgets) {
    j["activeBudgets"] = nlohmann::ordered_json::array();
    for (const auto& b : d.budgets->active())
      j["activeBudgets"].push_back(
          {{"name", b.name},
           {"until", b.until.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(b.until)},
           {"timeZone", b.timeZone},
           {"maxEvictions", b.allowance},
           {"used", b.used}});
  }
  // Profile and plugin names come from the policy and may hold any bytes: never throw on them.
  out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

// Only the explain part: the tables without the blank line that parts them from a plan, or the
// JSON entry (an array when several pods were asked).
void renderExplainOnly(const PlanData& d, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::Json) {
    nlohmann::ordered_json j = explainJson(d);
    if (j.size() == 1) j = j[0];
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  std::ostringstream tables;
  renderExplainTable(d, tables);
  const std::string text = tables.str();
  out << (text.empty() || text[0] != '\n' ? text : text.substr(1));
}

// `--explain` takes "namespace/name", both parts non-empty.
Status checkExplainKeys(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) {
    const auto slash = k.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == k.size() ||
        k.find('/', slash + 1) != std::string::npos)
      return Status::error("--explain \"" + k + "\": want namespace/name, e.g. --explain default/order-7c9d-1");
  }
  return Status::ok();
}

// The plan is written whole; then a pod that was asked about and is not there fails it, so a
// script notices the typo.
Status missingExplained(const framework::Explainer& e, const cluster::Snapshot& snapshot, const std::string& source) {
  std::string missing;
  for (const auto& a : e.asked())
    if (!findPod(snapshot, a)) missing += (missing.empty() ? "" : ", ") + a.ns + "/" + a.name;
  if (missing.empty()) return Status::ok();
  return Status::error("--explain: no pod " + missing + " in " + source);
}

// One line for each object with a saturated amount (the first few of them): the plan decided
// without those figures, and says so.
std::vector<std::string> saturatedNotes(const cluster::Snapshot& snapshot) {
  constexpr std::size_t kNamed = 5;
  std::vector<std::string> named;
  std::size_t count = 0;
  auto note = [&](const std::string& what, const std::string& fields) {
    if (fields.empty()) return;
    if (++count <= kNamed) named.push_back(what + " " + fields);
  };
  for (const api::Node* n : snapshot.nodes()) note("node " + n->name, api::saturatedFields(*n));
  for (const api::Pod* p : snapshot.pods())
    if (!p->requests.empty()) note("pod " + p->key(), api::saturatedFields(*p));
  std::vector<std::string> out;
  for (const std::string& n : named)
    out.push_back("saturated: " + n + " beyond int64 milli-units (kept as " + std::to_string(api::kSaturatedMilli) +
                  "m); usage plugins leave a node with a saturated usage out, and drain none for being "
                  "overutilized against a saturated capacity");
  if (count > kNamed) out.push_back("saturated: " + std::to_string(count - kNamed) + " more objects");
  return out;
}

}  // namespace

framework::WallSeconds planClock(const PlanOptions& options) {
  return options.now ? framework::WallSeconds::pinned(*options.now) : framework::WallSeconds(systemClock());
}

Status runPlan(const PlanOptions& options, std::ostream& out) {
  KD_TRY(checkExplainKeys(options.explain));
  cluster::Store store;
  PlanInput input;
  auto report = cluster::loadSnapshotFile(options.snapshotPath, store, options.maxSnapshotBytes, &input.metrics);
  if (!report.isOk()) return report.status();
  input.snapshot = store.snapshot();
  input.report = std::move(*report);
  input.sourceName = options.snapshotPath;

  framework::BuildContext ctx;
  ctx.priorityClassValue = [snapshot = input.snapshot, &options](const std::string& name) -> Result<std::int32_t> {
    if (const api::PriorityClass* pc = snapshot->priorityClass(name)) return pc->value;
    return Status::error("PriorityClass \"" + name + "\" is not in the snapshot " + options.snapshotPath);
  };
  ctx.now = planClock(options);
  auto engine = engine::buildEngine(options.policyPath, ctx);
  if (!engine.isOk()) return engine.status();
  return writePlan(*engine, std::move(input), options, out);
}

Status writePlan(const engine::Engine& engine, PlanInput input, const PlanOptions& options, std::ostream& out) {
  KD_TRY(checkExplainKeys(options.explain));
  std::vector<std::string> usageNotes;
  auto usage =
      planUsage({std::move(input.metrics), input.sourceName, options.prometheusResultPath, options.now, input.live},
                engine.usageNeeds(), usageNotes);
  if (!usage.isOk()) return usage.status();

  std::optional<framework::Explainer> explainer;
  framework::CycleScope scope;
  if (!options.explain.empty()) scope.explain = &explainer.emplace(options.explain);
  evictor::PlanSink sink;
  moves::NoWorkloads noWorkloads(
      "a snapshot file holds no Deployments: moves are planned from the API server (kdesched plan without "
      "--snapshot, or kubectl kdesched plan)");
  std::optional<moves::Advisor> advisor;
  if (engine.extension.moves.enabled)
    advisor.emplace(engine.extension.moves, input.workloads ? *input.workloads : noWorkloads, nullptr);
  std::optional<evictor::BudgetGate> budgets;
  if (!engine.extension.budgets.empty()) budgets.emplace(engine.extension.budgets, engine.clock);
  evictor::EvictionChain chain(engine.limits(), sink, budgets ? &*budgets : nullptr, advisor ? &*advisor : nullptr);
  framework::CycleResult cycle = engine.runCycle(*input.snapshot, chain, nullptr, scope, &*usage);

  cluster::LoadReport& shown = input.report;
  shown.warnings.insert(shown.warnings.end(), usageNotes.begin(), usageNotes.end());
  const std::vector<std::string> saturated = saturatedNotes(*input.snapshot);
  shown.warnings.insert(shown.warnings.end(), saturated.begin(), saturated.end());
  shown.warnings.insert(shown.warnings.begin(), engine.policy.warnings.begin(), engine.policy.warnings.end());
  PlanData data{explainer ? &*explainer : nullptr, sink, cycle, shown, *input.snapshot, engine,
                budgets ? &*budgets : nullptr};
  if (options.explainOnly && explainer)
    renderExplainOnly(data, options.format, out);
  else if (options.format == OutputFormat::Json)
    renderJson(data, out);
  else
    renderTable(data, out);
  return explainer ? missingExplained(*explainer, *input.snapshot, input.sourceName) : Status::ok();
}

}  // namespace kdesched::plan
