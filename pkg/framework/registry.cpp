#include "pkg/framework/registry.h"

namespace kdesched::framework {

void Registry::add(PluginRegistration r) {
  std::string name = r.name;
  plugins_.insert_or_assign(std::move(name), std::move(r));
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
