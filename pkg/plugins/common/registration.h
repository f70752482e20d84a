// The registration every plugin without special wiring shares: decode its args (errors carry the
// field path), then build the plugin from them, and from the cycle's wall clock when its
// constructor takes one (ages: PodLifeTime, RemoveFailedPods).
#pragma once

#include <memory>
#include <string_view>
#include <type_traits>
#include <utility>

#include "pkg/framework/registry.h"

namespace kdesched::plugins::common {

template <typename P, typename Decode>
framework::PluginRegistration registrationOf(std::string_view name, Decode decode) {
  return {std::string(name),
          [decode](const policy::RawArgs& raw,
                   const framework::BuildContext& ctx) -> Result<std::unique_ptr<framework::Plugin>> {
            auto args = decode(raw);
            if (!args.isOk()) return args.status();
            using Args = std::decay_t<decltype(args.value())>;
            if constexpr (std::is_constructible_v<P, Args, framework::WallSeconds>)
              return std::unique_ptr<framework::Plugin>(std::make_unique<P>(std::move(args.value()), ctx.now));
            else
              return std::unique_ptr<framework::Plugin>(std::make_unique<P>(std::move(args.value())));
          }};
}

}  // namespace kdesched::plugins::common
