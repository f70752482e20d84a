#include "pkg/plugins/antiaffinity/args.h"

namespace kdesched::plugins::antiaffinity {

Result<Args> decodeArgs(const policy::RawArgs& raw) {
  policy::ArgsReader r(raw);
  KD_TRY(r.structural());
  Args a;
  KD_TRY(readPodListFilter(r, a.filter));
  KD_TRY(r.finish());
  return a;
}

}  // namespace kdesched::plugins::antiaffinity
