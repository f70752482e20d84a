// registerDefaultPlugins: the one place that lists every plugin kdesched ships.
#pragma once

#include "pkg/framework/registry.h"

namespace kdesched::plugins {

// Adds every plugin to `registry`. A name already there (a plugin listed twice, or a registry
// filled twice) is a programming error: the process stops with the name on stderr.
void registerDefaultPlugins(framework::Registry& registry);

}  // namespace kdesched::plugins
