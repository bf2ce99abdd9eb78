#pragma once
// The mistakes a variant's own file can hold, told apart from wb's own bugs. A user
// adding a rung makes them (a factory that names another op or id, a launcher taking
// another op's argument struct, an id taken twice, a launch parameter read but never
// declared); they are bad input (exit 2) and their message names the file and what to
// change. What is left as std::logic_error is wb's own bug (exit 4).
#include <stdexcept>
#include <string>
#include <utility>

#include "base/errors.h"

namespace wb {

// A variant's file is wrong: the message names the file and the fix.
struct VariantFileError : UsageError {
  using UsageError::UsageError;
};

// A launch parameter asked of a ParamValues that does not hold it (ParamValues::get).
// Inside a variant's launcher it means the factory did not declare it: the registry
// turns it into a VariantFileError naming the file. Anywhere else it is wb's bug.
struct MissingLaunchParam : std::logic_error {
  explicit MissingLaunchParam(std::string param)
      : std::logic_error("launch parameter '" + param + "' is not set"), name(std::move(param)) {}
  std::string name;
};

}  // namespace wb
