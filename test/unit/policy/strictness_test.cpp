// docs/policy-strictness.md, row by row: every load-time check kdesched makes, with one example
// input each, and whether it stops the load (an error naming the field path) or loads with a
// warning naming it. The doc's table is read back and must list exactly these rows with the same
// answers, so neither can drift from the other (or from the code) silently.
//
// KDESCHED_STRICTNESS_DUMP=<dir> also writes each row's policy to <dir>/<id>.yaml, to run the same
// inputs through upstream (test/differential/build-harness.sh; see the doc).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "pkg/policy/policy.h"
#include "test/unit/testing/harness.h"
#include "test/unit/testing/paths.h"

namespace kdesched::testing {
namespace {

// Error: the load fails; Warning: it loads and one warning contains the fragment; Loads: it loads
// without a word.
enum class Answer { Error, Warning, Loads };

struct Row {
  std::string id;
  std::string policy;
  Answer answer;
  std::string fragment;  // after "policy.yaml: ": the field path (or the document-level message)
};

const std::string kHead = "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n";
const std::string kProfile =
    "profiles:\n- name: p\n  pluginConfig:\n  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 3600}\n"
    "  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n";
const std::string kArgs = "profiles[0].pluginConfig[0].args";
const std::string kEvictorArgs = "profiles[0].pluginConfig[1].args";

// A valid one-profile policy with extra top-level lines.
std::string top(const std::string& lines) { return kHead + lines + kProfile; }
// `profiles:` followed by `lines` (a whole profiles list).
std::string profiles(const std::string& lines) { return kHead + "profiles:\n" + lines; }
// One profile enabling `plugin` at `point` with `args` (flow YAML), and DefaultEvictor's args.
std::string plugin(const std::string& name, const std::string& point, const std::string& args,
                   const std::string& evictor = "") {
  std::string y = kHead + "profiles:\n- name: p\n  pluginConfig:\n  - name: " + name + "\n    args: " + args + "\n";
  if (!evictor.empty()) y += "  - name: DefaultEvictor\n    args: " + evictor + "\n";
  return y + "  plugins:\n    " + point + ":\n      enabled: [" + name + "]\n";
}
std::string plt(const std::string& args) { return plugin("PodLifeTime", "deschedule", args); }
std::string evictor(const std::string& args) { return plugin("PodLifeTime", "deschedule", "{states: [Failed]}", args); }
std::string lnu(const std::string& args, const std::string& extraTop = "") {
  std::string y = plugin("LowNodeUtilization", "balance", args);
  return extraTop.empty() ? y : kHead + extraTop + y.substr(kHead.size());
}
// ASCII `text` as UTF-16LE with a byte order mark.
std::string utf16le(const std::string& text) {
  std::string out = "\xFF\xFE";
  for (char c : text) out += {c, '\0'};
  return out;
}
const std::string kLnuOk = "thresholds: {cpu: 20}, targetThresholds: {cpu: 50}";

// The document.
std::vector<Row> documentRows() {
  using enum Answer;
  using namespace std::string_literals;
  return {
      {"F01", kHead + "profiles: [a, b\n", Error, "line 4, column 1: malformed YAML"},
      {"F02", "# nothing yet\n", Warning, "the policy is empty"},
      {"F03", top("") + "---\n" + top("maxNoOfPodsToEvictTotal: 1\n"), Error, "line 12: a second YAML document"},
      {"F04", "- a\n", Error, "the policy must be a mapping"},
      {"F05", top("maxNoOfPodsToEvictTotal: 1\nmaxNoOfPodsToEvictTotal: 100\n"), Error,
       "maxNoOfPodsToEvictTotal: duplicate key"},
      {"F06", plt("{maxPodLifeTimeSeconds: 60, namespaces: {include: [a]}, namespaces: {include: [b]}}"), Error,
       kArgs + ".namespaces: duplicate key"},
      {"F07", top("limits: &l {maxNoOfPodsToEvictTotal: 1}\n<<: *l\n"), Error, "\"<<\": YAML merge keys"},
      {"F08", top("? [a, b]\n: c\n"), Error, "mapping keys must be strings"},
      {"F09", top("note: \"a\0b\"\n"s), Error, "binary data"},
      {"F10", utf16le(top("")), Warning, "the file is UTF-16 text; read as upstream reads it"},
      {"F13", "\xFF\xFE" + std::string("a\0\0\xD8:\0", 6), Error, "the file is UTF-16 text: convert it"},
      {"F11", "(a directory)", Error, "is a directory"},
      {"F12", "(a file over 16 MiB)", Error, "the policy file is larger than 16 MiB"},
  };
}

// The top level.
std::vector<Row> topLevelRows() {
  using enum Answer;
  return {
      {"T01", "kind: DeschedulerPolicy\n" + kProfile, Warning, "apiVersion: missing"},
      {"T02", "apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\n", Error,
       "apiVersion: descheduler/v1alpha1 is not supported"},
      {"T03", "apiVersion: v1\nkind: DeschedulerPolicy\n", Error, "apiVersion: must be descheduler/v1alpha2"},
      {"T04", "apiVersion: descheduler/v1alpha2\n" + kProfile, Warning, "kind: missing"},
      {"T05", "apiVersion: descheduler/v1alpha2\nkind: Policy\n", Error, "kind: must be DeschedulerPolicy"},
      {"T06", top("someFutureField: 1\n"), Warning, "someFutureField: unknown top-level field"},
      {"T07", top("tracing: {collectorEndpoint: otel:4317}\n"), Warning, "tracing: accepted and ignored"},
      {"T08", top("maxNoOfPodsToEvictPerNod: 5\n"), Error, "maxNoOfPodsToEvictPerNod: unknown field"},
      {"T09", top("NodeSelector: pool=batch\n"), Error, "NodeSelector: unknown field"},
      {"T10", top("kdeschd: {compat: upstream}\n"), Error, "kdeschd: unknown field"},
      {"T11", top("nodeSelector: \"a in (b\"\n"), Error, "nodeSelector: invalid selector"},
      {"T12", top("nodeSelector: {pool: batch}\n"), Error, "nodeSelector: must be a string"},
      {"T13", top("maxNoOfPodsToEvictPerNode: -1\n"), Error, "maxNoOfPodsToEvictPerNode: must be a non-negative"},
      {"T14", top("maxNoOfPodsToEvictTotal: \"5\"\n"), Error, "maxNoOfPodsToEvictTotal: must be a non-negative"},
      {"T15", top("maxNoOfPodsToEvictTotal: 5000000000\n"), Loads, ""},
      {"T16", top("maxNoOfPodsToEvictTotal: 18446744073709551616\n"), Error,
       "maxNoOfPodsToEvictTotal: must be at most"},
      {"T17", top("evictionFailureEventNotification: sometimes\n"), Error,
       "evictionFailureEventNotification: must be true or false"},
      {"T18", top("gracePeriodSeconds: -1\n"), Warning, "gracePeriodSeconds: -1 is negative"},
      {"T19", top("gracePeriodSeconds: 1.5\n"), Error, "gracePeriodSeconds: must be an integer"},
      {"T20", kHead + "profiles: {name: p}\n", Error, "profiles: must be a list"},
      {"T21", top("kdesched: {antiFlapping: {backoffAfter: 0}}\n"), Error, "kdesched.antiFlapping.backoffAfter"},
  };
}

// metricsCollector and metricsProviders.
std::vector<Row> metricsRows() {
  using enum Answer;
  return {
      {"M01", top("metricsProviders: [{source: KubernetesMetrics}, {source: KubernetesMetrics}]\n"), Error,
       "metricsProviders[1].source: metric provider \"KubernetesMetrics\" is already configured"},
      {"M02", top("metricsCollector: {enabled: true}\nmetricsProviders: [{source: KubernetesMetrics}]\n"), Error,
       "metricsProviders[0].source: it is not allowed to combine"},
      {"M03", top("metricsProviders: [{source: Prometheus}]\n"), Error, "metricsProviders[0].prometheus: prometheus "},
      {"M04", top("metricsProviders: [{source: Prometheus, prometheus: {url: \"\"}}]\n"), Error,
       "metricsProviders[0].prometheus.url: prometheus URL is required"},
      {"M05", top("metricsProviders: [{source: Prometheus, prometheus: {url: \"://x\"}}]\n"), Error,
       "metricsProviders[0].prometheus.url: error parsing prometheus URL"},
      {"M06", top("metricsProviders: [{source: Prometheus, prometheus: {url: \"http://p\", authToken: {}}}]\n"), Error,
       "metricsProviders[0].prometheus.authToken: prometheus authToken secret is expected"},
      {"M07",
       top("metricsProviders: [{source: Prometheus, prometheus: {url: \"http://p\", authToken: {secretReference: "
           "{name: t}}}}]\n"),
       Error, "metricsProviders[0].prometheus.authToken.secretReference: prometheus authToken secret reference"},
      {"M08", top("metricsProviders: [{source: Graphite}]\n"), Warning, "metricsProviders[0].source: \"Graphite\""},
      {"M09", top("metricsProviders: [{source: KubernetesMetrics, prometheus: {url: \"http://p\"}}]\n"), Warning,
       "metricsProviders[0].prometheus: ignored"},
  };
}

// Profiles, pluginConfig and plugins.
std::vector<Row> profileRows() {
  using enum Answer;
  return {
      {"P01", profiles("- 5\n"), Error, "profiles[0]: must be a mapping"},
      {"P02", profiles("- plugins: {}\n"), Warning, "profiles[0].name: missing"},
      {"P03", profiles("- name: p\n- name: p\n"), Warning, "profiles[1].name: \"p\" is also used"},
      {"P04", profiles("- name: p\n  description: nightly\n"), Warning, "profiles[0].description: unknown field"},
      {"P05", profiles("- name: p\n  pluginConfig: {name: PodLifeTime}\n"), Error,
       "profiles[0].pluginConfig: must be a list"},
      {"P06", profiles("- name: p\n  pluginConfig: [{args: {}}]\n"), Error,
       "profiles[0].pluginConfig[0].name: missing"},
      {"P07", profiles("- name: p\n  pluginConfig: [{name: \"\"}]\n"), Error,
       "profiles[0].pluginConfig[0].name: every pluginConfig entry needs"},
      {"P08",
       profiles("- name: p\n  pluginConfig:\n  - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60}}\n"
                "  - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 60, namespaces: {include: [a]}}}\n"),
       Error, "profiles[0].pluginConfig[1].name: duplicate pluginConfig"},
      {"P09",
       profiles(
           "- name: p\n  pluginConfig: [{name: RemovePodsViolatingInterPodAntiAffinity, arg: {namespaces: "
           "{include: [nosuch]}}}]\n  plugins: {deschedule: {enabled: [RemovePodsViolatingInterPodAntiAffinity]}}\n"),
       Error, "profiles[0].pluginConfig[0].arg: unknown field \"arg\" (did you mean \"args\"?)"},
      {"P10", profiles("- name: p\n  pluginConfig: [{name: RemoveDuplicates, comment: all}]\n"), Warning,
       "profiles[0].pluginConfig[0].comment: unknown field"},
      {"P11", profiles("- name: p\n  pluginConfig: [{name: RemoveDuplicate}]\n"), Error,
       "profiles[0].pluginConfig[0].name: unknown plugin \"RemoveDuplicate\""},
      {"P12", profiles("- name: p\n  plugins: {sorting: {}}\n"), Warning, "profiles[0].plugins.sorting: unknown field"},
      {"P13", profiles("- name: p\n  plugins: {balance: {enable: [RemoveDuplicates]}}\n"), Warning,
       "profiles[0].plugins.balance.enable: unknown field"},
      {"P14", profiles("- name: p\n  plugins: {balance: {enabled: [\"\"]}}\n"), Error,
       "profiles[0].plugins.balance.enabled[0]: must be a plugin name"},
      {"P15", profiles("- name: p\n  plugins: {balance: {enabled: RemoveDuplicates}}\n"), Error,
       "profiles[0].plugins.balance.enabled: must be a list"},
      {"P16", profiles("- name: p\n  plugins: {balance: {enabled: [RemoveDuplicate]}}\n"), Error,
       "profiles[0].plugins.balance.enabled[0]: unknown plugin"},
      {"P17", profiles("- name: p\n  plugins: {balance: {enabled: [RemoveDuplicates]}}\n"), Error,
       "profiles[0].plugins.balance.enabled[0]: plugin \"RemoveDuplicates\" is enabled but has no pluginConfig"},
      {"P18", plugin("PodLifeTime", "balance", "{maxPodLifeTimeSeconds: 60}"), Error,
       "profiles[0].plugins.balance.enabled[0]: plugin \"PodLifeTime\" does not implement the balance"},
      {"P19", profiles("- name: p\n  plugins: {preEvictionFilter: {enabled: []}, preevictionfilter: {enabled: []}}\n"),
       Warning, "profiles[0].plugins.preEvictionFilter: ignored because preevictionfilter is also set"},
  };
}

// Plugin args, any plugin.
std::vector<Row> anyArgsRows() {
  using enum Answer;
  return {
      {"A01", plt("5"), Error, kArgs + ": must be a mapping"},
      {"A02", plt("{maxPodLifeTimeSecond: 60}"), Error, kArgs + ".maxPodLifeTimeSecond: unknown field"},
      {"A03", plt("{maxPodLifeTimeSeconds: 60, namespaces: {include: [a], exclude: [b]}}"), Error,
       kArgs + ".namespaces: only one of Include/Exclude namespaces can be set"},
      {"A04", plt("{maxPodLifeTimeSeconds: 60, labelSelector: {matchExpressions: [{key: app, operator: Gt}]}}"), Error,
       kArgs + ".labelSelector.matchExpressions[0].operator: must be one of"},
      {"A05", plt("{maxPodLifeTimeSeconds: 60, labelSelector: {matchExpressions: [{key: app, operator: In}]}}"), Error,
       kArgs + ".labelSelector.matchExpressions[0].values"},
      {"A06", plt("{maxPodLifeTimeSeconds: 1h}"), Error, kArgs + ".maxPodLifeTimeSeconds: must be an integer"},
      {"A07", plt("{maxPodLifeTimeSeconds: -1}"), Error, kArgs + ".maxPodLifeTimeSeconds: must be a non-negative"},
      {"A08", plugin("RemoveFailedPods", "deschedule", "{minPodLifetimeSeconds: 5000000000}"), Loads, ""},
      {"A09", plugin("RemoveFailedPods", "deschedule", "{exitCodes: [3000000000]}"), Error,
       kArgs + ".exitCodes[0]: must be an integer between"},
  };
}

// DefaultEvictor.
std::vector<Row> evictorRows() {
  using enum Answer;
  return {
      {"D01", evictor("{priorityThreshold: {value: 1, name: high}}"), Error,
       kEvictorArgs + ".priorityThreshold: priority threshold misconfigured"},
      {"D02", evictor("{priorityThreshold: {value: 2000000001}}"), Error,
       kEvictorArgs + ".priorityThreshold.value: priority threshold can't be greater than 2000000000"},
      {"D03", evictor("{priorityThreshold: {name: nosuch}}"), Error,
       kEvictorArgs + ".priorityThreshold.name: PriorityClass \"nosuch\" not found"},
      {"D04", evictor("{noEvictionPolicy: Sometimes}"), Error, kEvictorArgs + ".noEvictionPolicy: noEvictionPolicy"},
      {"D05", evictor("{podProtections: {extraEnabled: [PodsWithPVCs]}}"), Error,
       kEvictorArgs + ".podProtections.extraEnabled[0]: invalid pod protection policy"},
      {"D06", evictor("{podProtections: {defaultDisabled: [DaemonSetPods, DaemonSetPods]}}"), Error,
       kEvictorArgs + ".podProtections.defaultDisabled: PodProtections.DefaultDisabled contains duplicate"},
      {"D07",
       evictor("{podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: {protectedStorageClasses: "
               "[{name: \"\"}]}}}}"),
       Error, kEvictorArgs + ".podProtections.config.PodsWithPVC.protectedStorageClasses[0].name: "},
      {"D08",
       evictor("{ignorePvcPods: true, podProtections: {config: {PodsWithPVC: {protectedStorageClasses: [{name: "
               "\"\"}]}}}}"),
       Error, kEvictorArgs + ".podProtections.config.PodsWithPVC.protectedStorageClasses[0].name: "},
      {"D09", evictor("{podProtections: {config: {PodsWithPVC: {protectedStorageClasses: [{name: \"\"}]}}}}"), Warning,
       kEvictorArgs + ".podProtections.config.PodsWithPVC.protectedStorageClasses[0].name: empty"},
      {"D10", evictor("{evictDaemonSetPods: true, podProtections: {extraEnabled: [PodsWithPVC]}}"), Error,
       kEvictorArgs + ".podProtections: cannot use Deprecated fields"},
      {"D11", evictor("{nodeFit: true, nodeSelector: \"a in (b\"}"), Warning,
       kEvictorArgs + ".nodeSelector: invalid selector"},
      {"D12", evictor("{nodeSelector: \"a in (b\"}"), Warning, kEvictorArgs + ".nodeSelector: invalid selector"},
      {"D13", evictor("{minPodAge: soon}"), Error, kEvictorArgs + ".minPodAge: must be a duration"},
      {"D14", evictor("{namespaceLabelSelector: {matchExpressions: [{key: team, operator: Exists, values: [a]}]}}"),
       Error, kEvictorArgs + ".namespaceLabelSelector.matchExpressions[0].values"},
  };
}

// LowNodeUtilization and HighNodeUtilization.
std::vector<Row> utilizationRows() {
  using enum Answer;
  return {
      {"N01", lnu("{targetThresholds: {cpu: 50}}"), Error, kArgs + ".thresholds: thresholds config is not valid"},
      {"N02", lnu("{thresholds: {cpu: 20}, targetThresholds: {cpu: 120}}"), Error,
       kArgs + ".targetThresholds.cpu: targetThresholds config is not valid: cpu threshold not in [0, 100]"},
      {"N03", lnu("{thresholds: {cpu: 20}, targetThresholds: {memory: 50}}"), Error,
       kArgs + ".targetThresholds: thresholds and targetThresholds configured different resources"},
      {"N04", lnu("{thresholds: {cpu: 60}, targetThresholds: {cpu: 50}}"), Error,
       kArgs + ".thresholds.cpu: thresholds' cpu percentage is greater"},
      {"N05", lnu("{thresholds: {\"\": 20, cpu: 20}, targetThresholds: {\"\": 50, cpu: 50}}"), Warning,
       kArgs + ".thresholds: a resource name is empty"},
      {"N06", lnu("{" + kLnuOk + ", evictableNamespaces: {include: [a]}}"), Error,
       kArgs + ".evictableNamespaces.include: only Exclude namespaces can be set"},
      {"N07", lnu("{" + kLnuOk + ", metricsUtilization: {source: KubernetesMetrics, metricsServer: true}}"), Error,
       kArgs + ".metricsUtilization.source: it is not allowed to set both"},
      {"N08",
       lnu("{" + kLnuOk + ", metricsUtilization: {source: KubernetesMetrics, prometheus: {query: q}}}",
           "metricsProviders: [{source: KubernetesMetrics}]\n"),
       Error, kArgs + ".metricsUtilization.prometheus: prometheus configuration is not allowed"},
      {"N09", lnu("{" + kLnuOk + ", metricsUtilization: {source: Prometheus}}"), Error,
       kArgs + ".metricsUtilization.prometheus: prometheus query is required"},
      {"N10",
       lnu("{" + kLnuOk + ", metricsUtilization: {source: Prometheus, prometheus: {query: q}}}",
           "metricsProviders: [{source: Prometheus, prometheus: {url: \"http://p\"}}]\n"),
       Error, kArgs + ".thresholds: thresholds are expected to specify a single instance of \"MetricResource\""},
      {"N11", lnu("{" + kLnuOk + ", metricsUtilization: {source: KubernetesMetrics}}"), Warning,
       kArgs + ".metricsUtilization: metrics client not initialized"},
      {"N12", plugin("HighNodeUtilization", "balance", "{thresholds: {cpu: 20}, evictionModes: [Everything]}"), Error,
       kArgs + ".evictionModes[0]: invalid eviction mode Everything"},
      {"N13", lnu("{" + kLnuOk + ", evictionLimits: {node: -1}}"), Error,
       kArgs + ".evictionLimits.node: must be a non-negative integer"},
      {"N14",
       plugin("HighNodeUtilization", "balance",
              "{thresholds: {cpu: 20}, metricsUtilization: {source: KubernetesMetrics, metricsServer: true}}"),
       Error, kArgs + ".metricsUtilization.source: it is not allowed to set both"},
  };
}

// The other plugins' own checks.
std::vector<Row> otherPluginRows() {
  using enum Answer;
  return {
      {"L01", plt("{namespaces: {include: [a]}}"), Error, kArgs + ": at least one filtering criterion"},
      {"L02", plt("{states: [Sleeping]}"), Error, kArgs + ".states[0]: states must be one of"},
      {"L03", plt("{conditions: [{}]}"), Error, kArgs + ".conditions[0]: at least one of type, status, reason"},
      {"L04", plt("{states: [Failed], ownerKinds: {include: [Job], exclude: [DaemonSet]}}"), Error,
       kArgs + ".ownerKinds: only one of Include/Exclude ownerKinds can be set"},
      {"L05", plugin("RemovePodsHavingTooManyRestarts", "deschedule", "{podRestartThreshold: 0}"), Error,
       kArgs + ".podRestartThreshold: invalid PodsHavingTooManyRestarts threshold"},
      {"L06", plugin("RemovePodsHavingTooManyRestarts", "deschedule", "{podRestartThreshold: 5, states: [Failed]}"),
       Error, kArgs + ".states[0]: states must be one of [CrashLoopBackOff Running]"},
      {"L07", plugin("RemovePodsViolatingNodeTaints", "deschedule", "{includedTaints: [a], excludedTaints: [b]}"),
       Error, kArgs + ".includedTaints: either includedTaints or excludedTaints can be set, but not both"},
      {"L08", plugin("RemovePodsViolatingTopologySpreadConstraint", "balance", "{constraints: [Sometimes]}"), Error,
       kArgs + ".constraints[0]: constraint Sometimes is not one of"},
      {"L09", plugin("RemovePodsViolatingNodeAffinity", "deschedule", "{}"), Error,
       kArgs + ".nodeAffinityType: nodeAffinityType needs to be set"},
      {"L10",
       plugin("RemovePodsViolatingNodeAffinity", "deschedule",
              "{nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution, preferred]}"),
       Warning, kArgs + ".nodeAffinityType[1]: unknown value \"preferred\", skipped"},

  };
}

const std::vector<Row>& rows() {
  static const std::vector<Row> all = [] {
    std::vector<Row> r;
    for (auto group : {&documentRows, &topLevelRows, &metricsRows, &profileRows, &anyArgsRows, &evictorRows,
                       &utilizationRows, &otherPluginRows})
      for (Row& row : group()) r.push_back(std::move(row));
    return r;
  }();
  return all;
}

std::string describe(Answer a) { return a == Answer::Error ? "error" : a == Answer::Warning ? "warning" : "loads"; }

// The outcome of loading `policy` as a file at `path` (F11, F12) or as text (every other row).
struct Outcome {
  bool ok = false;
  std::string error;
  std::vector<std::string> warnings;
};

Outcome load(const Row& row) {
  Outcome out;
  if (row.id == "F11" || row.id == "F12") {
    const auto dir = std::filesystem::temp_directory_path() / ("kdesched-strictness-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string path = dir.string();
    if (row.id == "F12") {
      path = (dir / "policy.yaml").string();
      std::ofstream(path) << top("") << std::string((16u << 20) + 1, '#') << "\n";
    }
    auto p = policy::loadPolicyFile(path);
    std::filesystem::remove_all(dir);
    out.ok = p.isOk();
    // loadPolicyFile names the file itself: say "policy.yaml" as the text rows do.
    if (!out.ok) out.error = "policy.yaml: " + p.error().substr(p.error().find(": ") + 2);
    return out;
  }
  auto engine = engineFor(row.policy);
  out.ok = engine.isOk();
  if (!out.ok) out.error = engine.error();
  if (out.ok) out.warnings = engine->policy.warnings;
  return out;
}

class PolicyStrictness : public ::testing::TestWithParam<Row> {};

TEST_P(PolicyStrictness, AnswersAsTheDocSays) {
  const Row& row = GetParam();
  if (const char* dir = std::getenv("KDESCHED_STRICTNESS_DUMP"); dir && row.id != "F11" && row.id != "F12")
    std::ofstream(std::string(dir) + "/" + row.id + ".yaml", std::ios::binary) << row.policy;
  const Outcome got = load(row);
  const std::string want = "policy.yaml: " + row.fragment;
  std::string warnings;
  for (const auto& w : got.warnings) warnings += "\n  " + w;
  switch (row.answer) {
    case Answer::Error:
      ASSERT_FALSE(got.ok) << "loaded; warnings:" << warnings;
      EXPECT_NE(got.error.find(want), std::string::npos) << got.error;
      break;
    case Answer::Warning: {
      ASSERT_TRUE(got.ok) << got.error;
      bool found = false;
      for (const auto& w : got.warnings) found = found || w.find(want) != std::string::npos;
      EXPECT_TRUE(found) << "no warning with \"" << want << "\"; got:" << warnings;
      break;
    }
    case Answer::Loads:
      ASSERT_TRUE(got.ok) << got.error;
      EXPECT_TRUE(got.warnings.empty()) << warnings;
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(Rows, PolicyStrictness, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<Row>& i) { return i.param.id; });

// The doc's table rows: "| <id> | input | kdesched's answer | ...", the answer starting with
// "error", "warning" or "loads".
std::map<std::string, std::string> docAnswers() {
  std::ifstream doc(std::string(kdesched::testing::sourceDir()) + "/docs/policy-strictness.md");
  EXPECT_TRUE(doc.good()) << "docs/policy-strictness.md is missing";
  std::map<std::string, std::string> out;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    for (std::string cell; std::getline(ss, cell, '|');) cells.push_back(cell);
    if (cells.size() < 3) continue;
    auto word = [](const std::string& cell) {
      std::string s = cell.substr(std::min(cell.size(), cell.find_first_not_of(" *`")));
      return s.substr(0, s.find_first_of(" *`:,"));
    };
    const std::string id = word(cells[0]);
    if (id.size() != 3 || !std::isupper(static_cast<unsigned char>(id[0])) ||
        !std::isdigit(static_cast<unsigned char>(id[1])) || !std::isdigit(static_cast<unsigned char>(id[2])))
      continue;
    out[id] = word(cells[2]);
  }
  return out;
}

TEST(PolicyStrictnessDoc, ListsEveryRowWithTheSameAnswer) {
  std::map<std::string, std::string> doc = docAnswers();
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.id);
    auto it = doc.find(row.id);
    ASSERT_NE(it, doc.end()) << "docs/policy-strictness.md has no row " << row.id;
    EXPECT_EQ(it->second, describe(row.answer));
    doc.erase(it);
  }
  for (const auto& [id, answer] : doc) ADD_FAILURE() << "docs/policy-strictness.md row " << id << " has no test row";
}

}  // namespace
}  // namespace kdesched::testing
