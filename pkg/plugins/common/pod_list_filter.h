// The `namespaces` + `labelSelector` listing filters many plugins share (reference §1.6).
#pragma once

#include <optional>

#include "pkg/api/types.h"
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
};

// Reads `namespaces` and `labelSelector` with upstream's validation.
Status readPodListFilter(policy::ArgsReader& r, PodListFilter& out);

}  // namespace kdesched::plugins
