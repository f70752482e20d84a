#include "pkg/plugins/removepodsviolatinginterpodantiaffinity/args.h"

namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  KD_TRY(readPodListFilter(r, a.filter));
  KD_TRY(r.finish());
  return a;
}

}  // namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity
