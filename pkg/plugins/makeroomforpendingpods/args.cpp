#include "pkg/plugins/makeroomforpendingpods/args.h"

#include <string>

namespace kdesched::plugins::makeroomforpendingpods {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  std::optional<std::int64_t> minPending;
  std::optional<std::int32_t> maxMoves;
  KD_TRY(readPodListFilter(r, a.filter));
  KD_TRY(r.readInt64("minPendingSeconds", minPending));
  KD_TRY(r.readInt32("minPriority", a.minPriority));
  KD_TRY(r.readInt32("maxMovesPerPod", maxMoves));
  KD_TRY(r.finish());
  if (minPending) {
    if (*minPending < 0)
      return r.error("minPendingSeconds", "must be zero or positive, got " + std::to_string(*minPending));
    a.minPendingSeconds = *minPending;
  }
  if (maxMoves) {
    if (*maxMoves < 1 || *maxMoves > kMaxMovesPerPod)
      return r.error("maxMovesPerPod",
                     "must be between 1 and " + std::to_string(kMaxMovesPerPod) + ", got " + std::to_string(*maxMoves));
    a.maxMovesPerPod = *maxMoves;
  }
  return a;
}

}  // namespace kdesched::plugins::makeroomforpendingpods
