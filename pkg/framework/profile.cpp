#include "pkg/framework/profile.h"

#include <algorithm>
#include <map>

#include "pkg/policy/args.h"

namespace kdesched::framework {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string unknownPluginMessage(const std::string& name, const Registry& registry) {
  std::string msg = "unknown plugin \"" + name + "\"";
  std::string close = policy::closestMatch(name, registry.names(), 5);
  if (!close.empty()) msg += " (did you mean \"" + close + "\"?)";
  msg += "; known plugins: " + join(registry.names());
  return msg;
}

void injectDefaultEvictor(policy::Profile& p) {
  auto prepend = [](std::vector<std::string>& list) {
    if (std::find(list.begin(), list.end(), kDefaultEvictor) == list.end()) list.insert(list.begin(), kDefaultEvictor);
  };
  prepend(p.plugins.filter.enabled);
  prepend(p.plugins.preEvictionFilter.enabled);
  if (!p.findConfig(kDefaultEvictor)) {
    policy::PluginConfig cfg;
    cfg.name = kDefaultEvictor;
    cfg.args.path = p.path + ".pluginConfig[DefaultEvictor (defaulted)].args";
    p.pluginConfig.insert(p.pluginConfig.begin(), std::move(cfg));
  }
}

}  // namespace

std::vector<std::string> Profile::strategyNames() const {
  std::vector<std::string> out;
  for (auto* d : deschedule) out.emplace_back(d->name());
  for (auto* b : balance) out.emplace_back(b->name());
  return out;
}

Result<std::vector<Profile>> buildProfiles(policy::DeschedulerPolicy& pol, const Registry& registry,
                                           const BuildContext& callerCtx) {
  policy::Warnings pluginWarnings;
  BuildContext ctx = callerCtx;
  ctx.warnings = &pluginWarnings;
  ctx.metricsProviders = {pol.kubernetesMetricsConfigured(), pol.prometheusProvider() != nullptr};
  std::vector<std::string> errors;
  auto fail = [&](const std::string& path, const std::string& msg) {
    errors.push_back(pol.sourceName + ": " + path + ": " + msg);
  };

  std::vector<Profile> built;
  for (auto& p : pol.profiles) {
    // Validation first (upstream validates before defaulting): every pluginConfig names a plugin.
    for (std::size_t j = 0; j < p.pluginConfig.size(); ++j) {
      const auto& cfg = p.pluginConfig[j];
      if (!registry.find(cfg.name))
        fail(p.path + ".pluginConfig[" + std::to_string(j) + "].name", unknownPluginMessage(cfg.name, registry));
    }
    injectDefaultEvictor(p);

    Profile out;
    out.name = p.name;
    std::map<std::string, Plugin*> instances;
    auto instance = [&](const std::string& name, const std::string& path) -> Plugin* {
      if (auto it = instances.find(name); it != instances.end()) return it->second;
      const PluginRegistration* reg = registry.find(name);
      if (!reg) {
        fail(path, unknownPluginMessage(name, registry));
        instances[name] = nullptr;
        return nullptr;
      }
      const policy::PluginConfig* cfg = p.findConfig(name);
      if (!cfg) {
        fail(path, "plugin \"" + name + "\" is enabled but has no pluginConfig entry; add `- name: " + name +
                       "` under " + p.path + ".pluginConfig (upstream requires one too)");
        instances[name] = nullptr;
        return nullptr;
      }
      auto plugin = reg->factory(cfg->args, ctx);
      if (!plugin.isOk()) {
        errors.push_back(pol.sourceName + ": " + plugin.error());
        instances[name] = nullptr;
        return nullptr;
      }
      Plugin* raw = plugin->get();
      out.instances.push_back(std::move(plugin.value()));
      instances[name] = raw;
      return raw;
    };

    auto wire = [&](const policy::PluginSet& set, const std::string& point, auto& target) {
      using Iface = std::remove_pointer_t<typename std::decay_t<decltype(target)>::value_type>;
      for (std::size_t k = 0; k < set.enabled.size(); ++k) {
        const std::string& name = set.enabled[k];
        std::string path = p.path + ".plugins." + point + ".enabled[" + std::to_string(k) + "]";
        Plugin* plugin = instance(name, path);
        if (!plugin) continue;
        auto* typed = dynamic_cast<Iface*>(plugin);
        if (!typed) {
          fail(path, "plugin \"" + name + "\" does not implement the " + point + " extension point");
          continue;
        }
        if (std::find(target.begin(), target.end(), typed) == target.end()) target.push_back(typed);
      }
    };
    wire(p.plugins.deschedule, "deschedule", out.deschedule);
    wire(p.plugins.balance, "balance", out.balance);
    wire(p.plugins.filter, "filter", out.filters);
    wire(p.plugins.preEvictionFilter, "preEvictionFilter", out.preEvictionFilters);
    for (DeschedulePlugin* d : out.deschedule)
      if (auto* timed = dynamic_cast<DeadlinePlugin*>(d)) out.deadlines.push_back(timed);
    built.push_back(std::move(out));
  }
  for (std::string& w : pluginWarnings) pol.warnings.push_back(pol.sourceName + ": " + std::move(w));
  if (!errors.empty()) {
    std::string msg;
    for (const auto& e : errors) msg += (msg.empty() ? "" : "\n") + e;
    return Status::error(msg);
  }
  return built;
}

}  // namespace kdesched::framework
