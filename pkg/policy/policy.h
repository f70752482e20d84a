// DeschedulerPolicy descheduler/v1alpha2: types, YAML decoding, validation and defaulting.
// Field names and meanings are upstream's, so an upstream policy file works unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pkg/api/labels.h"
#include "pkg/base/status.h"

namespace kdesched::policy {

namespace detail {
struct YamlValue;  // a yaml-cpp node: pkg/policy/detail/yaml_value.h, for pkg/policy's .cpp files
}  // namespace detail

// A plugin's raw args: kept as YAML until the plugin registry decodes them with the plugin's own
// strict decoder (an ArgsReader). The YAML is opaque here so that plugins, and everything that
// includes the framework, compile without yaml-cpp. `path` is the field path of the args node for
// error messages, e.g. "profiles[0].pluginConfig[1].args".
struct RawArgs {
  std::shared_ptr<const detail::YamlValue> value = nullptr;  // null when `args` was omitted
  std::string path;
  // A pluginConfig entry's `args`: its top level also takes `apiVersion` and `kind`, with any value,
  // and ignores them (upstream's args types embed a TypeMeta).
  bool pluginArgs = false;

  // True when the args are present and not YAML null.
  bool isSet() const;
  // Raw args from YAML text (one document), for tests and tools that hold args as text. Malformed
  // YAML is an error naming the line and column; empty text gives unset args.
  static Result<RawArgs> fromYaml(std::string_view yaml, std::string path);
};

// Lines for the operator about input that loads but may not mean what it looks like; each names
// the field path.
using Warnings = std::vector<std::string>;

struct PluginConfig {
  std::string name;
  RawArgs args;
};

struct PluginSet {
  std::vector<std::string> enabled;
  std::vector<std::string> disabled;  // decoded and ignored, as upstream
};

struct Plugins {
  PluginSet deschedule;
  PluginSet balance;
  PluginSet filter;
  PluginSet preEvictionFilter;  // accepts `preEvictionFilter` and upstream's `preevictionfilter`
};

struct Profile {
  std::string name;
  std::vector<PluginConfig> pluginConfig;
  Plugins plugins;
  std::string path;  // "profiles[0]"
  const PluginConfig* findConfig(const std::string& plugin) const;
};

// `metricsProviders[].prometheus.authToken.secretReference`: the Secret holding the token (data key
// prometheusAuthToken).
struct SecretReference {
  std::string ns;
  std::string name;
};

struct PrometheusProvider {
  std::string url;
  // Unset: the in-cluster service-account token.
  std::optional<SecretReference> authTokenSecret;
};

// One `metricsProviders` entry. `source` is kept as written: upstream accepts any string here and
// only KubernetesMetrics and Prometheus are ever used.
struct MetricsProvider {
  std::string source;
  std::optional<PrometheusProvider> prometheus;
  std::string path;  // "metricsProviders[0]"
};

struct DeschedulerPolicy {
  std::vector<Profile> profiles;
  std::optional<std::string> nodeSelector;               // label-selector string over all nodes
  std::optional<api::LabelSelector> nodeSelectorParsed;  // set when nodeSelector is
  std::optional<std::uint32_t> maxNoOfPodsToEvictPerNode;
  std::optional<std::uint32_t> maxNoOfPodsToEvictPerNamespace;
  std::optional<std::uint32_t> maxNoOfPodsToEvictTotal;
  std::optional<bool> evictionFailureEventNotification;
  std::optional<std::int64_t> gracePeriodSeconds;
  // `metricsCollector.enabled` (deprecated: the same as a KubernetesMetrics provider).
  std::optional<bool> metricsCollectorEnabled;
  std::vector<MetricsProvider> metricsProviders;
  // A metrics-server source is configured (metricsCollector.enabled, or a KubernetesMetrics provider).
  bool kubernetesMetricsConfigured() const;
  // The Prometheus provider, or null.
  const PrometheusProvider* prometheusProvider() const;
  // The top-level `kdesched:` block (event triggers, anti-flapping): decoded by decodeExtension (extension.h).
  RawArgs extension;
  std::string sourceName;  // file name used to prefix errors
  // Input accepted as upstream accepts it but worth a word to the operator (an ignored key, a
  // skipped value), one line each ("<source>: <field.path>: ..."): the daemon logs them at start,
  // `plan` prints them. Plugins add theirs when profiles are built.
  Warnings warnings;
};

// Parses and structurally validates a policy document. Does not know plugins: plugin names and
// args are checked by the framework's registry (see framework/profile.h), which also applies
// upstream's defaulting (DefaultEvictor injection). Errors read
// `<source>: <field.path>: <what is wrong>, got <value>`.
Result<DeschedulerPolicy> parsePolicy(const std::string& yamlText, const std::string& sourceName);
Result<DeschedulerPolicy> loadPolicyFile(const std::string& path);

}  // namespace kdesched::policy
