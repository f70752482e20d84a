#include "test/unit/testing/paths.h"

namespace kdesched::testing {

const char* sourceDir() { return KDESCHED_SOURCE_DIR; }
const char* kdeschedBinary() { return KDESCHED_BINARY; }

}  // namespace kdesched::testing
