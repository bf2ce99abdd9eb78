#pragma once
// The identity of a variant: what a verification on a device is keyed to. It is the
// SHA-256 of the code the device build compiles for the variant, normalised so that
// what does not change that code does not change the identity either
// (docs/identity.md has the rules and why):
//
// - the variant's file with every project header it includes inlined where it is
//   included (once, as #pragma once does), and, for each header in a room of kernel
//   code (Config::code_rooms: the device primitives and the variants' own folders), the
//   source file beside it (x.cpp or x.cu beside x.h or x.cuh: the host code the variant
//   calls into, such as its library plumbing and launch checks), with its includes. The
//   op contract's headers (argument structs, constants, tolerances) are inlined too, but
//   not the harness's .cpp files behind them: they describe and check a variant, they
//   are not what runs;
// - comments dropped, the text cut into C++ preprocessing tokens (so whitespace and
//   line breaks do not count, but `a + +b` stays apart from `a ++b`), and `#include`
//   lines replaced by what they include, so that a header's path and a line's number
//   count nowhere (__FILE__ and __LINE__ are never expanded: they are tokens in the
//   macro that uses them);
// - #if/#ifdef branches decided where the configuration decides them: the device build
//   never defines WB_EMU, so the emulator's branches (and emu/, test machinery that
//   never runs on a device) are not part of it; a condition on anything else
//   (__CUDA_ARCH__, WB_HAVE_CUDNN, a system macro) keeps every branch, directives
//   included.
//
// So moving a header, editing a comment or reformatting keeps the identity; changing a
// constant in a kernel, in a header it includes or in the host code beside one changes
// it. System headers (<...>) are named, not read: the compiler and toolkit versions are
// recorded beside each measurement (the report's context), not hashed.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace wb::identity {

// Bumped when the normalisation changes: identities of two schemes never compare equal.
inline constexpr const char* kScheme = "wb.identity/1";

struct Config {
  std::filesystem::path root;  // the repository: quoted includes resolve against it
  // Project folders that are test machinery, never part of what runs on a device.
  std::vector<std::string> excluded = {"emu/"};
  // Rooms whose headers' companion sources are the variant's code: the device
  // primitives and the variants' folders. kernels/cuda/ is where the device primitives
  // lived before device/ (2026-11-29): kept so that the identities of older commits'
  // variants can be computed by the same rules (tools/rekey.py).
  std::vector<std::string> code_rooms = {"device/", "variants/", "kernels/cuda/"};
  // Files read with another text in their place: how tools/rekey.py states, for an
  // older commit, that its variants saw of a file only what replaced it since.
  std::map<std::string, std::string> substitutes;
  // Macros the device build leaves undefined, so that #if on them is decided.
  std::set<std::string> undefined = {"WB_EMU"};
};

struct Identity {
  std::string hash;                // 64 hex digits
  std::vector<std::string> files;  // the project files covered, in the order hashed
  std::string normalised;          // the text hashed, one preprocessing line per line
};

// The identity of `file` (relative to config.root). Throws std::runtime_error when a
// file cannot be read or a conditional is unbalanced.
Identity of(const std::string& file, const Config& config);

// The preprocessing tokens of one text, comments dropped, one vector per logical line
// (exposed for tests).
std::vector<std::vector<std::string>> tokenize(const std::string& text);

}  // namespace wb::identity
