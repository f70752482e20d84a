// The registration every plugin shares: decode its args (errors carry the field path; a decoder
// that also takes policy::Warnings has them passed on to ctx.warn), then build the plugin from
// them, from what `resolve` makes of them with the build context when the plugin needs more (a
// PriorityClass's value, the usage source it balances by), and from the cycle's wall clock when
// its constructor takes one (ages: PodLifeTime, RemoveFailedPods, DefaultEvictor).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "pkg/framework/registry.h"

namespace kdesched::plugins::common {

namespace detail {

template <typename Decode>
auto decodeWithWarnings(const Decode& decode, const policy::RawArgs& raw, const framework::BuildContext& ctx) {
  if constexpr (std::is_invocable_v<Decode, const policy::RawArgs&, policy::Warnings&>) {
    policy::Warnings warnings;
    auto decoded = decode(raw, warnings);
    for (std::string& w : warnings) ctx.warn(std::move(w));
    return decoded;
  } else {
    return decode(raw);
  }
}

template <typename P, typename Args, typename... Extra>
std::unique_ptr<framework::Plugin> make(Args&& args, const framework::BuildContext& ctx, Extra&&... extra) {
  if constexpr (std::is_constructible_v<P, Args, Extra..., framework::WallSeconds>)
    return std::make_unique<P>(std::forward<Args>(args), std::forward<Extra>(extra)..., ctx.now);
  else
    return std::make_unique<P>(std::forward<Args>(args), std::forward<Extra>(extra)...);
}

}  // namespace detail

template <typename P, typename Decode>
framework::PluginRegistration registrationOf(std::string_view name, Decode decode) {
  return {std::string(name),
          [decode](const policy::RawArgs& raw,
                   const framework::BuildContext& ctx) -> Result<std::unique_ptr<framework::Plugin>> {
            auto args = detail::decodeWithWarnings(decode, raw, ctx);
            if (!args.isOk()) return args.status();
            return detail::make<P>(std::move(args.value()), ctx);
          }};
}

// `resolve(const Args&, const policy::RawArgs&, const framework::BuildContext&)` returns a
// Result<X>; its error (which names the field by raw.path) fails the build, its value is the
// constructor's second argument.
template <typename P, typename Decode, typename Resolve>
framework::PluginRegistration registrationOf(std::string_view name, Decode decode, Resolve resolve) {
  return {std::string(name),
          [decode, resolve](const policy::RawArgs& raw,
                            const framework::BuildContext& ctx) -> Result<std::unique_ptr<framework::Plugin>> {
            auto args = detail::decodeWithWarnings(decode, raw, ctx);
            if (!args.isOk()) return args.status();
            auto extra = resolve(args.value(), raw, ctx);
            if (!extra.isOk()) return extra.status();
            return detail::make<P>(std::move(args.value()), ctx, std::move(extra.value()));
          }};
}

}  // namespace kdesched::plugins::common
