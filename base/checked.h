#pragma once
// Size arithmetic that cannot wrap. Element counts, byte counts and derived dims are
// products of int64 dims a user types (--shape B=...), and a product that wraps
// silently allocates a small buffer for a huge problem (or a negative one). A
// CheckedInt carries the value and whether any step on the way overflowed; callers
// test ok() and turn a failure into a UsageError that names the dims.
//
// Kept out of the headers variants include: including it would change every variant's
// source hash without changing any kernel.
#include <cstdint>

namespace wb {

class CheckedInt {
 public:
  CheckedInt(int64_t v) : value_(v) {}  // NOLINT: implicit, so that dims mix in freely

  bool ok() const { return ok_; }
  // Only meaningful when ok().
  int64_t value() const { return value_; }

  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    CheckedInt out(0);
    out.ok_ = a.ok_ && b.ok_ && !__builtin_mul_overflow(a.value_, b.value_, &out.value_);
    return out;
  }
  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    CheckedInt out(0);
    out.ok_ = a.ok_ && b.ok_ && !__builtin_add_overflow(a.value_, b.value_, &out.value_);
    return out;
  }
  CheckedInt& operator*=(CheckedInt b) { return *this = *this * b; }
  CheckedInt& operator+=(CheckedInt b) { return *this = *this + b; }

 private:
  int64_t value_;
  bool ok_ = true;
};

}  // namespace wb
