// registerDefaultPlugins: the one place that lists every plugin kdesched ships.
#pragma once

#include "pkg/framework/registry.h"

namespace kdesched::plugins {

void registerDefaultPlugins(framework::Registry& registry);

}  // namespace kdesched::plugins
