// The `namespaces` + `labelSelector` listing filters many plugins share (upstream's api.Namespaces
// in pkg/api/types.go: include or exclude, never both; a labelSelector matched against pod labels).
#pragma once

#include <optional>

#include "pkg/api/types.h"
#include "pkg/framework/plugin.h"
#include "pkg/policy/args.h"

namespace kdesched::plugins {

struct PodListFilter {
  std::optional<policy::Namespaces> namespaces;
  std::optional<api::LabelSelector> labelSelector;

  bool allows(const api::Pod& pod) const {
    if (namespaces && !namespaces->allows(pod.ns.view())) return false;
    if (labelSelector && !labelSelector->matches(pod.labels)) return false;
    return true;
  }
  // Which of the two leaves the pod out: a plugin's skip reason.
  struct Excluded {
    const PodListFilter* filter;
    const api::Pod* pod;
    std::string text() const { return filter->whyNot(*pod); }
  };
  // allows(); a pod left out is the plugin's skip, with which of the two left it out.
  bool admits(const framework::Handle& h, const api::Pod& pod) const {
    if (allows(pod)) return true;
    h.skip(pod, Excluded{this, &pod});
    return false;
  }
  std::string whyNot(const api::Pod& pod) const;
};

// Reads `namespaces` and `labelSelector` with upstream's validation.
Status readPodListFilter(policy::ArgsReader& r, PodListFilter& out);

}  // namespace kdesched::plugins
