#include "pkg/plugins/registry.h"

#include <cstdlib>

#include "pkg/base/log.h"
#include "pkg/plugins/defaultevictor/defaultevictor.h"
#include "pkg/plugins/highnodeutilization/highnodeutilization.h"
#include "pkg/plugins/lownodeutilization/lownodeutilization.h"
#include "pkg/plugins/makeroomforpendingpods/makeroomforpendingpods.h"
#include "pkg/plugins/nodeaffinity/nodeaffinity.h"
#include "pkg/plugins/podlifetime/podlifetime.h"
#include "pkg/plugins/removeduplicates/removeduplicates.h"
#include "pkg/plugins/removefailedpods/removefailedpods.h"
#include "pkg/plugins/removepodshavingtoomanyrestarts/removepodshavingtoomanyrestarts.h"
#include "pkg/plugins/removepodsviolatinginterpodantiaffinity/removepodsviolatinginterpodantiaffinity.h"
#include "pkg/plugins/removepodsviolatingnodetaints/removepodsviolatingnodetaints.h"
#include "pkg/plugins/topologyspread/topologyspread.h"

namespace kdesched::plugins {
namespace {

// The list below is code, not input: a name registered twice is a programming error, so it stops
// the process at startup with the name rather than letting one plugin silently replace another.
void mustAdd(framework::Registry& registry, framework::PluginRegistration r) {
  if (Status s = registry.add(std::move(r)); !s.isOk()) {
    log::error("plugin registry is inconsistent", {{"error", s.message()}});
    std::abort();
  }
}

}  // namespace

void registerDefaultPlugins(framework::Registry& registry) {
  mustAdd(registry, defaultevictor::registration());
  mustAdd(registry, removepodsviolatinginterpodantiaffinity::registration());
  mustAdd(registry, highnodeutilization::registration());
  mustAdd(registry, lownodeutilization::registration());
  mustAdd(registry, nodeaffinity::registration());
  mustAdd(registry, removepodsviolatingnodetaints::registration());
  mustAdd(registry, podlifetime::registration());
  mustAdd(registry, removeduplicates::registration());
  mustAdd(registry, removefailedpods::registration());
  mustAdd(registry, removepodshavingtoomanyrestarts::registration());
  mustAdd(registry, topologyspread::registration());
  mustAdd(registry, makeroomforpendingpods::registration());
}

}  // namespace kdesched::plugins
