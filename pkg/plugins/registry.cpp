#include "pkg/plugins/registry.h"

#include "pkg/plugins/antiaffinity/antiaffinity.h"
#include "pkg/plugins/defaultevictor/defaultevictor.h"
#include "pkg/plugins/lownodeutilization/lownodeutilization.h"
#include "pkg/plugins/nodeaffinity/nodeaffinity.h"
#include "pkg/plugins/topologyspread/topologyspread.h"

namespace kdesched::plugins {

void registerDefaultPlugins(framework::Registry& registry) {
  registry.add(defaultevictor::registration());
  registry.add(antiaffinity::registration());
  registry.add(lownodeutilization::registration());
  registry.add(nodeaffinity::registration());
  registry.add(topologyspread::registration());
}

}  // namespace kdesched::plugins
