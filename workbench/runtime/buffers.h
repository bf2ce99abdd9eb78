#pragma once
// Memory owners: host buffers (64-byte aligned) and executor buffers (host or device
// memory, depending on the backend), plus one op's set of tensors in either.
#include <cstddef>
#include <memory>
#include <vector>

#include "contract/op.h"

namespace wb {

class Executor;

class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::size_t bytes);
  void* data() const { return ptr_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> ptr_;
  std::size_t bytes_ = 0;
};

// Memory of an executor (device memory on cuda), released through it. With an offset,
// the buffer starts that many bytes into its allocation (to misalign it on purpose).
class Buffer {
 public:
  Buffer() = default;
  Buffer(Executor& ex, std::size_t bytes, std::size_t offset = 0);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() const { return ptr_ ? static_cast<char*>(ptr_) + offset_ : nullptr; }
  std::size_t bytes() const { return bytes_; }

 private:
  Executor* ex_ = nullptr;
  void* ptr_ = nullptr;  // the allocation
  std::size_t bytes_ = 0;
  std::size_t offset_ = 0;
};

// Every tensor of one op at one shape, in host memory.
struct HostTensors {
  HostTensors(const OpSpec& op, const Shape& shape);
  // With omit_optional, the optional tensors are passed as null.
  TensorTable table(bool omit_optional = false) const;

  const OpSpec* op;
  Shape shape;
  std::vector<HostBuffer> buffers;  // in the order of op->tensors
};

// The same in an executor's memory; with misalign, every tensor starts that many bytes
// past the executor's (at least 64-byte) alignment.
struct ExecutorTensors {
  ExecutorTensors(Executor& ex, const OpSpec& op, const Shape& shape, std::size_t misalign = 0);
  TensorTable table(bool omit_optional = false) const;

  const OpSpec* op;
  Shape shape;
  std::vector<Buffer> buffers;
};

}  // namespace wb
