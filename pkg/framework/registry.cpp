#include "pkg/framework/registry.h"

namespace kdesched::framework {

Status Registry::add(PluginRegistration r) {
  if (r.name.empty()) return Status::error("a plugin registration has no name");
  if (!r.factory) return Status::error("plugin \"" + r.name + "\" is registered without a factory");
  std::string name = r.name;
  // try_emplace leaves `r` alone when the name is taken: the first registration stays.
  if (!plugins_.try_emplace(name, std::move(r)).second)
    return Status::error("plugin \"" + name + "\" is registered twice");
  return Status::ok();
}

const PluginRegistration* Registry::find(const std::string& name) const {
  auto it = plugins_.find(name);
  return it == plugins_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, r] : plugins_) out.push_back(n);
  return out;
}

std::string_view toString(Refusal r) {
  switch (r) {
    case Refusal::None: return "none";
    case Refusal::Filter: return "filter";
    case Refusal::PreEvictionFilter: return "preEvictionFilter";
    case Refusal::TotalLimit: return "limit-total";
    case Refusal::NodeLimit: return "limit-node";
    case Refusal::NamespaceLimit: return "limit-namespace";
    case Refusal::PluginLimit: return "limit-plugin";
    case Refusal::Pdb: return "pdb";
    case Refusal::AntiFlapping: return "anti-flapping";
    case Refusal::ApiError: return "api";
  }
  return "unknown";
}

}  // namespace kdesched::framework
