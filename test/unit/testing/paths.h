// Where the tests find the checkout (examples, policies, testdata, docs) and the built kdesched.
// Defined in paths.cpp, the one file compiled with those absolute paths: as a definition on every
// test's command line they made a fresh clone recompile every test file, because ccache rewrites
// path arguments under CCACHE_BASEDIR but not the values of macros.
#pragma once

namespace kdesched::testing {

// The source tree's root (CMAKE_SOURCE_DIR).
const char* sourceDir();
// The kdesched binary of the same build tree.
const char* kdeschedBinary();

}  // namespace kdesched::testing
