#include "pkg/plugins/removefailedpods/args.h"

namespace kdesched::plugins::removefailedpods {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::uint32_t> minLifetime;
  std::optional<std::vector<std::string>> ownerKinds, reasons;
  std::optional<std::vector<std::int32_t>> exitCodes;
  std::optional<bool> init;
  KD_TRY(readPodListFilter(r, a.filter));
  KD_TRY(r.readUint32("minPodLifetimeSeconds", minLifetime));
  KD_TRY(r.readStringList("excludeOwnerKinds", ownerKinds));
  KD_TRY(r.readStringList("reasons", reasons));
  KD_TRY(r.readInt32List("exitCodes", exitCodes));
  KD_TRY(r.readBool("includingInitContainers", init));
  KD_TRY(r.finish());
  a.minPodLifetimeSeconds = minLifetime.value_or(kDefaultMinPodLifetimeSeconds);
  a.excludeOwnerKinds = ownerKinds.value_or(std::vector<std::string>{});
  for (const auto& reason : reasons.value_or(std::vector<std::string>{})) a.reasons.emplace_back(reason);
  a.exitCodes = exitCodes.value_or(std::vector<std::int32_t>{});
  a.includingInitContainers = init.value_or(false);
  return a;
}

}  // namespace kdesched::plugins::removefailedpods
