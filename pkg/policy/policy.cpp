#include "pkg/policy/policy.h"

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
#include "pkg/policy/detail/yaml_value.h"

namespace kdesched::policy {
namespace {

using detail::describeValue;

constexpr std::string_view kApiVersion = "descheduler/v1alpha2";
constexpr std::string_view kKind = "DeschedulerPolicy";
// An unknown top-level key this close to a known one is a typo, not a field of another tool.
constexpr std::size_t kTopLevelTypoDistance = 2;
// A real policy is a few kilobytes; anything far larger is the wrong file, and yaml-cpp needs
// several times the input size in memory.
constexpr std::size_t kMaxPolicyBytes = 16u << 20;

// Fields upstream has and kdesched does not implement yet. Running with them silently ignored
// would behave differently from upstream, so they are refused unless they are empty/disabled.
struct Unsupported {
  std::string_view field;
  std::string_view hint;
};
constexpr Unsupported kUnsupported[] = {
    {"metricsProviders", "remove it: kdesched computes utilization from pod requests"},
    {"metricsCollector", "remove it or set enabled: false: kdesched computes utilization from pod requests"},
};

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

Status readPluginSet(ArgsReader& r, PluginSet& out) {
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
  return Status::ok();
}

Status readPlugins(ArgsReader& r, Plugins& out) {
  // Upstream's Go struct still has these two points; they are decoded and never run.
  PluginSet presort, sort;
  if (Status s = r.readObject("presort", [&](ArgsReader& p) { return readPluginSet(p, presort); }); !s) return s;
  if (Status s = r.readObject("sort", [&](ArgsReader& p) { return readPluginSet(p, sort); }); !s) return s;
  if (Status s = r.readObject("deschedule", [&](ArgsReader& p) { return readPluginSet(p, out.deschedule); }); !s) {
    return s;
  }
  if (Status s = r.readObject("balance", [&](ArgsReader& p) { return readPluginSet(p, out.balance); }); !s) return s;
  if (Status s = r.readObject("filter", [&](ArgsReader& p) { return readPluginSet(p, out.filter); }); !s) return s;
  // The README writes `preEvictionFilter`, upstream's Go JSON tag is `preevictionfilter`: a policy
  // written either way must work unchanged.
  bool camel = false, lower = false;
  auto readPre = [&](ArgsReader& p) { return readPluginSet(p, out.preEvictionFilter); };
  if (Status s = r.readObject("preEvictionFilter", readPre, &camel); !s) return s;
  PluginSet lowerSet;
  if (Status s = r.readObject(
          "preevictionfilter", [&](ArgsReader& p) { return readPluginSet(p, lowerSet); }, &lower);
      !s) {
    return s;
  }
  if (camel && lower) {
    return r.error("preevictionfilter", "set either preEvictionFilter or preevictionfilter, not both");
  }
  if (lower) out.preEvictionFilter = std::move(lowerSet);
  return Status::ok();
}

// `what` names the field for the operator: "every profile needs a unique name".
Status requireName(ArgsReader& r, const std::optional<std::string>& name, const std::string& what) {
  if (!name) return r.error("name", "missing; " + what);
  if (name->empty()) return r.error("name", what + ", got \"\"");
  return Status::ok();
}

Status readProfile(ArgsReader& r, std::vector<Profile>& profiles) {
  Profile p;
  p.path = r.path();
  std::optional<std::string> name;
  if (Status s = r.readString("name", name); !s) return s;
  if (Status s = requireName(r, name, "every profile needs a unique name"); !s) return s;
  for (const Profile& other : profiles) {
    if (other.name == *name) {
      return r.error("name", "duplicate profile name (also used by " + other.path + "), got \"" + *name + "\"");
    }
  }
  p.name = *name;

  std::vector<std::string> configPaths;
  Status st = r.readObjectList("pluginConfig", [&](ArgsReader& c, std::size_t) -> Status {
    PluginConfig cfg;
    std::optional<std::string> pluginName;
    if (Status s = c.readString("name", pluginName); !s) return s;
    if (Status s = requireName(c, pluginName, "every pluginConfig entry needs the plugin's name"); !s) return s;
    for (std::size_t i = 0; i < p.pluginConfig.size(); ++i) {
      if (p.pluginConfig[i].name == *pluginName) {
        // Upstream would silently use one of the two: say which entries collide instead.
        return c.error("name", "duplicate pluginConfig for this plugin (also at " + configPaths[i] + "), got \"" +
                                   *pluginName + "\"");
      }
    }
    cfg.name = *pluginName;
    if (Status s = c.readRaw("args", cfg.args); !s) return s;
    p.pluginConfig.push_back(std::move(cfg));
    configPaths.push_back(c.path());
    return Status::ok();
  });
  if (!st) return st;

  if (Status s = r.readObject("plugins", [&](ArgsReader& pl) { return readPlugins(pl, p.plugins); }); !s) return s;
  profiles.push_back(std::move(p));
  return Status::ok();
}

Status readUnsupported(ArgsReader& top) {
  for (const Unsupported& u : kUnsupported) {
    RawArgs raw;
    if (Status s = top.readRaw(u.field, raw); !s) return s;
    const YAML::Node& value = detail::yamlOf(raw);
    if (!value.IsDefined() || value.IsNull()) continue;
    bool harmless = false;
    if (u.field == "metricsProviders") {
      harmless = value.IsSequence() && value.size() == 0;
    } else if (u.field == "metricsCollector") {
      // `metricsCollector: {enabled: false}` asks for exactly what kdesched does.
      std::optional<bool> enabled;
      Status s = top.readObject(u.field, [&](ArgsReader& m) { return m.readBool("enabled", enabled); });
      if (!s) return s;
      harmless = !enabled.value_or(false);
    } else {
      harmless = value.IsMap() && value.size() == 0;
    }
    if (!harmless) {
      return top.error(u.field,
                       "not supported yet by kdesched; " + std::string(u.hint) + ", got " + describeValue(value));
    }
  }
  return Status::ok();
}

Status readTopLevel(const YAML::Node& root, DeschedulerPolicy& policy) {
  ArgsReader top(detail::rawArgs(root, ""));
  if (!top.structural().isOk()) return top.structural();

  std::optional<std::string> apiVersion, kind;
  RawArgs apiVersionNode, kindNode;
  if (Status s = top.readString("apiVersion", apiVersion); !s) return s;
  if (Status s = top.readRaw("apiVersion", apiVersionNode); !s) return s;
  if (!apiVersion) return top.error("apiVersion", "missing; set apiVersion: descheduler/v1alpha2");
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
  if (!kind) return top.error("kind", "missing; set kind: DeschedulerPolicy");
  if (*kind != kKind)
    return top.error("kind", "must be DeschedulerPolicy, got " + describeValue(detail::yamlOf(kindNode)));

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
    return top.error("gracePeriodSeconds",
                     "must be a non-negative integer, got " + std::to_string(*policy.gracePeriodSeconds));
  }
  if (Status s = readUnsupported(top); !s) return s;
  // kdesched's own settings live under one top-level key that no upstream field uses; upstream
  // ignores unknown top-level keys, so a policy with this block still works there unchanged.
  if (Status s = top.readRaw("kdesched", policy.extension); !s) return s;  // at path "kdesched"

  Status st =
      top.readObjectList("profiles", [&](ArgsReader& r, std::size_t) { return readProfile(r, policy.profiles); });
  if (!st) return st;
  // Upstream ignores unknown top-level keys, and so does kdesched (with a warning), except a near
  // miss of a known one: `maxNoOfPodsToEvictPerNod` would silently drop a safety limit.
  std::vector<std::string> ignored;
  if (Status s = top.finishLenient(kTopLevelTypoDistance, ignored); !s) return s;
  for (const std::string& key : ignored) {
    policy.warnings.push_back(policy.sourceName + ": " + top.pathOf(key) + ": " +
                              (key == "tracing" ? "accepted and ignored: kdesched does not export traces"
                                                : "unknown top-level field, ignored (as upstream ignores it)"));
  }
  return Status::ok();
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
    if (scan.nonEmpty == 0) {
      return Status::error(sourceName + ": the policy is empty; expected a DeschedulerPolicy with apiVersion: " +
                           std::string(kApiVersion));
    }
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
    return Status::error(sourceName + ": the policy is empty; expected a DeschedulerPolicy with apiVersion: " +
                         std::string(kApiVersion));
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
  if (!root.IsMap()) {
    return Status::error(sourceName + ": the policy must be a mapping with apiVersion, kind and profiles, got " +
                         describeValue(root));
  }

  DeschedulerPolicy policy;
  policy.sourceName = sourceName;
  if (Status s = readTopLevel(root, policy); !s) return std::move(s.prefix(sourceName));
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
