#include "pkg/policy/policy.h"

#include "pkg/api/text_input.h"
#include "pkg/api/yaml_scan.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "pkg/policy/args.h"
#include "pkg/policy/detail/metrics_sources.h"
#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace {

using detail::describeValue;
using detail::quote;

constexpr std::string_view kApiVersion = "descheduler/v1alpha2";
constexpr std::string_view kKind = "DeschedulerPolicy";
// An unknown key this close to a guarded one is a typo of it, not a field of another tool.
constexpr std::size_t kTypoDistance = 2;
// The top-level fields whose loss would let a run evict more than asked.
const std::vector<std::string_view> kTopLevelGuarded = {"nodeSelector", "maxNoOfPodsToEvictPerNode",
                                                        "maxNoOfPodsToEvictPerNamespace", "maxNoOfPodsToEvictTotal",
                                                        "kdesched"};
// A real policy is a few kilobytes; anything far larger is the wrong file, and yaml-cpp needs
// several times the input size in memory.
constexpr std::size_t kMaxPolicyBytes = 16u << 20;

// Error messages quote parser text, which can be any bytes the file contained (yaml-cpp's own
// wording is ASCII).
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 200)) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u >= 0x7F) ? '?' : c;
  }
  return out;
}

// Upstream ignores unknown keys everywhere but inside plugin args (its policy decoder is not
// strict), so kdesched does too, with a warning; a near miss of a `guarded` key stays an error.
Status ignoreUnknown(ArgsReader& r, Warnings& warnings, const std::vector<std::string_view>& guarded = {},
                     std::string_view what = "unknown field") {
  std::vector<ArgsReader::IgnoredKey> ignored;
  if (Status s = r.finishLenient(guarded, kTypoDistance, ignored); !s) return s;
  for (const ArgsReader::IgnoredKey& k : ignored) {
    if (r.path().empty() && k.key == "tracing") {
      warnings.push_back("tracing: accepted and ignored: kdesched does not export traces");
      continue;
    }
    std::string line = r.pathOf(k.key) + ": " + std::string(what) + ", ignored (as upstream ignores it)";
    if (!k.suggestion.empty()) line += "; did you mean " + quote(k.suggestion) + "?";
    warnings.push_back(std::move(line));
  }
  return Status::ok();
}

Status readPluginSet(ArgsReader& r, PluginSet& out, Warnings& warnings) {
  for (auto [key, list] : {std::pair{"enabled", &out.enabled}, std::pair{"disabled", &out.disabled}}) {
    std::optional<std::vector<std::string>> names;
    if (Status s = r.readStringList(key, names); !s) return s;
    if (!names) continue;
    for (std::size_t i = 0; i < names->size(); ++i) {
      if ((*names)[i].empty()) {
        return Status::error(r.pathOf(key) + "[" + std::to_string(i) + "]: must be a plugin name, got \"\"");
      }
    }
    *list = std::move(*names);
  }
  return ignoreUnknown(r, warnings);
}

Status readPlugins(ArgsReader& r, Plugins& out, Warnings& warnings) {
  auto set = [&](PluginSet& target) {
    return [&warnings, &target](ArgsReader& p) { return readPluginSet(p, target, warnings); };
  };
  // Upstream's Go struct still has these two points; they are decoded and never run.
  PluginSet presort, sort;
  if (Status s = r.readObject("presort", set(presort)); !s) return s;
  if (Status s = r.readObject("sort", set(sort)); !s) return s;
  if (Status s = r.readObject("deschedule", set(out.deschedule)); !s) return s;
  if (Status s = r.readObject("balance", set(out.balance)); !s) return s;
  if (Status s = r.readObject("filter", set(out.filter)); !s) return s;
  // The README writes `preEvictionFilter`, upstream's Go JSON tag is `preevictionfilter`: a policy
  // written either way must work unchanged. With both, upstream reads only the lower-case one.
  if (r.has("preevictionfilter")) {
    RawArgs camel;
    if (Status s = r.readRaw("preEvictionFilter", camel); !s) return s;
    if (camel.isSet()) {
      warnings.push_back(r.pathOf("preEvictionFilter") +
                         ": ignored because preevictionfilter is also set (upstream reads only preevictionfilter)");
    }
    if (Status s = r.readObject("preevictionfilter", set(out.preEvictionFilter)); !s) return s;
  } else if (Status s = r.readObject("preEvictionFilter", set(out.preEvictionFilter)); !s) {
    return s;
  }
  return ignoreUnknown(r, warnings);
}

// Upstream runs a profile without a name, or under another profile's name, as written: so does
// kdesched, and says so.
void checkProfileName(const ArgsReader& r, const std::optional<std::string>& name, const std::vector<Profile>& others,
                      Warnings& warnings) {
  if (!name || name->empty()) {
    warnings.push_back(r.pathOf("name") + ": " + (name ? "empty" : "missing") +
                       "; the profile runs unnamed, as upstream runs it (profile=\"\" in logs and metrics)");
    return;
  }
  for (const Profile& other : others) {
    if (other.name == *name) {
      warnings.push_back(r.pathOf("name") + ": " + quote(*name) + " is also used by " + other.path +
                         "; both run, as upstream runs them, and share the profile label in logs and metrics");
      return;
    }
  }
}

Status readPluginConfig(ArgsReader& c, Profile& p, std::vector<std::string>& configPaths, Warnings& warnings) {
  PluginConfig cfg;
  std::optional<std::string> pluginName;
  if (Status s = c.readString("name", pluginName); !s) return s;
  if (!pluginName) return c.error("name", "missing; every pluginConfig entry needs the plugin's name");
  if (pluginName->empty()) return c.error("name", "every pluginConfig entry needs the plugin's name, got \"\"");
  for (std::size_t i = 0; i < p.pluginConfig.size(); ++i) {
    if (p.pluginConfig[i].name == *pluginName) {
      // Upstream would silently use one of the two: say which entries collide instead.
      return c.error("name", "duplicate pluginConfig for this plugin (also at " + configPaths[i] + "), got \"" +
                                 *pluginName + "\"");
    }
  }
  cfg.name = *pluginName;
  if (Status s = c.readRaw("args", cfg.args); !s) return s;
  cfg.args.pluginArgs = true;
  // A misspelt `args` would leave the plugin on empty args, which for several plugins means
  // "every pod" (no namespaces, no label selector): that stays an error.
  if (Status s = ignoreUnknown(c, warnings, {"args"}); !s) return s;
  p.pluginConfig.push_back(std::move(cfg));
  configPaths.push_back(c.path());
  return Status::ok();
}

Status readProfile(ArgsReader& r, std::vector<Profile>& profiles, Warnings& warnings) {
  Profile p;
  p.path = r.path();
  std::optional<std::string> name;
  if (Status s = r.readString("name", name); !s) return s;
  checkProfileName(r, name, profiles, warnings);
  p.name = name.value_or("");

  std::vector<std::string> configPaths;
  Status st = r.readObjectList(
      "pluginConfig", [&](ArgsReader& c, std::size_t) { return readPluginConfig(c, p, configPaths, warnings); });
  if (!st) return st;

  if (Status s = r.readObject("plugins", [&](ArgsReader& pl) { return readPlugins(pl, p.plugins, warnings); }); !s)
    return s;
  if (Status s = ignoreUnknown(r, warnings); !s) return s;
  profiles.push_back(std::move(p));
  return Status::ok();
}

Status readTopLevel(const YAML::Node& root, DeschedulerPolicy& policy) {
  ArgsReader top(detail::rawArgs(root, ""));
  if (!top.structural().isOk()) return top.structural();

  std::optional<std::string> apiVersion, kind;
  RawArgs apiVersionNode, kindNode;
  if (Status s = top.readString("apiVersion", apiVersion); !s) return s;
  if (Status s = top.readRaw("apiVersion", apiVersionNode); !s) return s;
  if (!apiVersion) {
    // Upstream then decodes into its internal type, whose fields have no JSON names: it reads
    // nothing, validates nothing and runs no profile. So does kdesched, and says so.
    policy.warnings.push_back(
        "apiVersion: missing, so upstream reads none of the policy's fields and runs nothing; kdesched "
        "does the same: set apiVersion: descheduler/v1alpha2");
    return Status::ok();
  }
  if (*apiVersion == "descheduler/v1alpha1") {
    return top.error("apiVersion",
                     "descheduler/v1alpha1 is not supported: rewrite the policy as descheduler/v1alpha2 "
                     "(strategies become profiles[].plugins and pluginConfig)");
  }
  if (*apiVersion != kApiVersion) {
    return top.error("apiVersion",
                     "must be descheduler/v1alpha2, got " + describeValue(detail::yamlOf(apiVersionNode)));
  }
  if (Status s = top.readString("kind", kind); !s) return s;
  if (Status s = top.readRaw("kind", kindNode); !s) return s;
  if (!kind) {
    // Upstream's decoder takes the kind from the type it decodes into.
    policy.warnings.push_back("kind: missing; read as DeschedulerPolicy, as upstream reads it");
  } else if (*kind != kKind) {
    return top.error("kind", "must be DeschedulerPolicy, got " + describeValue(detail::yamlOf(kindNode)));
  }

  if (Status s = top.readString("nodeSelector", policy.nodeSelector); !s) return s;
  if (policy.nodeSelector) {
    Result<api::LabelSelector> parsed = api::parseLabelSelector(*policy.nodeSelector);
    // pkg/api's message already quotes the selector and says where it fails.
    if (!parsed) return top.error("nodeSelector", parsed.error());
    policy.nodeSelectorParsed = std::move(parsed.value());
  }
  if (Status s = top.readUint32("maxNoOfPodsToEvictPerNode", policy.maxNoOfPodsToEvictPerNode); !s) return s;
  if (Status s = top.readUint32("maxNoOfPodsToEvictPerNamespace", policy.maxNoOfPodsToEvictPerNamespace); !s) return s;
  if (Status s = top.readUint32("maxNoOfPodsToEvictTotal", policy.maxNoOfPodsToEvictTotal); !s) return s;
  if (Status s = top.readBool("evictionFailureEventNotification", policy.evictionFailureEventNotification); !s) {
    return s;
  }
  if (Status s = top.readInt64("gracePeriodSeconds", policy.gracePeriodSeconds); !s) return s;
  if (policy.gracePeriodSeconds && *policy.gracePeriodSeconds < 0) {
    // Upstream passes it on unchecked, and the API server reads a negative grace period as 1s.
    policy.warnings.push_back("gracePeriodSeconds: " + std::to_string(*policy.gracePeriodSeconds) +
                              " is negative; sent as is, as upstream sends it, and the API server then uses 1 second");
  }
  if (Status s =
          detail::readMetricsSources(top, policy, [&](ArgsReader& r) { return ignoreUnknown(r, policy.warnings); });
      !s)
    return s;
  // kdesched's own settings live under one top-level key that no upstream field uses; upstream
  // ignores unknown top-level keys, so a policy with this block still works there unchanged.
  if (Status s = top.readRaw("kdesched", policy.extension); !s) return s;  // at path "kdesched"

  Status st = top.readObjectList(
      "profiles", [&](ArgsReader& r, std::size_t) { return readProfile(r, policy.profiles, policy.warnings); });
  if (!st) return st;
  // Dropping a misspelt node selector, limit or kdesched block would evict more than asked.
  return ignoreUnknown(top, policy.warnings, kTopLevelGuarded, "unknown top-level field");
}

std::string at(const YAML::Mark& m) {
  if (m.is_null()) return std::string();
  return "line " + std::to_string(m.line + 1) + ", column " + std::to_string(m.column + 1) + ": ";
}

// The policy's single document, or why there is none.
Result<YAML::Node> loadDocument(const std::string& yamlText, const std::string& sourceName) {
  try {
    // Scan first: yaml-cpp 0.7's LoadAll can loop forever on malformed input (see yaml_scan.h).
    api::YamlScan scan = api::scanYaml(yamlText);
    if (scan.stuck) {
      std::size_t pos = static_cast<std::size_t>(std::max(scan.stuckAt.pos, 0));
      std::string token = pos < yamlText.size() ? printable(yamlText.substr(pos, 1)) : std::string("end of input");
      return Status::error(sourceName + ": " + at(scan.stuckAt) + "malformed YAML: unexpected \"" + token + "\"");
    }
    if (scan.nonEmpty == 0) return YAML::Node();  // empty: parseUnguarded says what that means
    if (scan.nonEmpty > 1) {
      const YAML::Mark& m = scan.secondDocument;
      std::string where = m.is_null() ? std::string() : "line " + std::to_string(m.line + 1) + ": ";
      return Status::error(sourceName + ": " + where +
                           "a second YAML document (after ---); a policy file holds exactly one DeschedulerPolicy");
    }
    // The scan went through the same parser steps without getting stuck, so this terminates.
    for (const YAML::Node& d : YAML::LoadAll(yamlText)) {
      if (d.IsDefined() && !d.IsNull()) return d;
    }
    return YAML::Node();
  } catch (const YAML::DeepRecursion& e) {
    return Status::error(sourceName + ": " + at(e.mark) + "malformed YAML: nesting is too deep");
  } catch (const YAML::Exception& e) {
    return Status::error(sourceName + ": " + at(e.mark) + "malformed YAML: " + printable(e.msg));
  }
}

Result<DeschedulerPolicy> parseUnguarded(const std::string& yamlText, const std::string& sourceName) {
  Result<YAML::Node> document = loadDocument(yamlText, sourceName);
  if (!document) return document.status();
  const YAML::Node& root = *document;
  DeschedulerPolicy policy;
  policy.sourceName = sourceName;
  if (!root.IsDefined() || root.IsNull()) {
    // Upstream decodes an empty file into an empty policy and runs nothing: so does kdesched.
    policy.warnings.push_back(sourceName +
                              ": the policy is empty, so nothing runs, as upstream runs nothing; expected a "
                              "DeschedulerPolicy with apiVersion: " +
                              std::string(kApiVersion));
    return policy;
  }
  if (!root.IsMap()) {
    return Status::error(sourceName + ": the policy must be a mapping with apiVersion, kind and profiles, got " +
                         describeValue(root));
  }

  if (Status s = readTopLevel(root, policy); !s) return std::move(s.prefix(sourceName));
  for (std::string& w : policy.warnings) w = sourceName + ": " + w;
  return policy;
}

}  // namespace

const PluginConfig* Profile::findConfig(const std::string& plugin) const {
  for (const PluginConfig& c : pluginConfig) {
    if (c.name == plugin) return &c;
  }
  return nullptr;
}

Result<DeschedulerPolicy> parsePolicy(const std::string& yamlText, const std::string& sourceName) {
  if (std::optional<std::string> utf8 = api::fromUtf16(yamlText); utf8 && !utf8->empty()) {
    Result<DeschedulerPolicy> p = parsePolicy(*utf8, sourceName);
    if (p) p->warnings.push_back(sourceName + ": the file is UTF-16 text; read as upstream reads it");
    return p;
  }
  // Before yaml-cpp: a NUL byte came out as "unknown escape character: ?", UTF-16 likewise.
  if (auto text = api::checkTextEncoding(yamlText, "a DeschedulerPolicy in YAML"); !text.isOk())
    return Status::error(sourceName + ": " + text.error());
  // yaml-cpp reports problems by throwing, and no exception may leave this module.
  try {
    return parseUnguarded(yamlText, sourceName);
  } catch (const std::bad_alloc&) {
    return Status::error(sourceName + ": out of memory while reading the policy");
  } catch (const std::exception& e) {
    return Status::error(sourceName + ": cannot read the policy: " + printable(e.what()));
  } catch (...) {
    return Status::error(sourceName + ": cannot read the policy: unknown error");
  }
}

Result<DeschedulerPolicy> loadPolicyFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::error(path + ": is a directory, expected a policy file");
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) return Status::error(path + ": cannot open the policy file: " + std::strerror(errno));
  std::string text;
  char buffer[64 * 1024];
  // Read in chunks rather than trusting the size: the path may be a pipe or /dev/stdin.
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get())) {
    if (text.size() + n > kMaxPolicyBytes) {
      return Status::error(path + ": the policy file is larger than 16 MiB; is this the right file?");
    }
    text.append(buffer, n);
  }
  if (std::ferror(file.get())) return Status::error(path + ": cannot read the policy file: " + std::strerror(errno));
  return parsePolicy(text, path);
}

}  // namespace kdesched::policy
