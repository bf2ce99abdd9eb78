#include "workbench/runtime/buffers.h"

#include <cstdlib>
#include <new>

#include "workbench/runtime/executor.h"

namespace wb {

HostBuffer::HostBuffer(std::size_t bytes) : bytes_(bytes) {
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw std::bad_alloc();
  ptr_.reset(p);
}

void HostBuffer::Free::operator()(void* p) const { std::free(p); }

Buffer::Buffer(Executor& ex, std::size_t bytes, std::size_t offset)
    : ex_(&ex), ptr_(bytes ? ex.allocate(bytes + offset) : nullptr), bytes_(bytes), offset_(offset) {}

Buffer::~Buffer() {
  if (ptr_) ex_->release(ptr_);
}

Buffer::Buffer(Buffer&& o) noexcept : ex_(o.ex_), ptr_(o.ptr_), bytes_(o.bytes_), offset_(o.offset_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) ex_->release(ptr_);
    ex_ = o.ex_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    offset_ = o.offset_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

HostTensors::HostTensors(const OpSpec& op_, const Shape& shape_) : op(&op_), shape(shape_) {
  for (const auto& t : op_.tensors) buffers.emplace_back(t.bytes(shape_));
}

TensorTable HostTensors::table(bool omit_optional) const {
  std::vector<void*> data;
  for (std::size_t i = 0; i < buffers.size(); ++i)
    data.push_back(omit_optional && op->tensors[i].optional ? nullptr : buffers[i].data());
  return TensorTable(*op, shape, std::move(data));
}

ExecutorTensors::ExecutorTensors(Executor& ex, const OpSpec& op_, const Shape& shape_, std::size_t misalign)
    : op(&op_), shape(shape_) {
  for (const auto& t : op_.tensors) buffers.emplace_back(ex, t.bytes(shape_), misalign);
}

TensorTable ExecutorTensors::table(bool omit_optional) const {
  std::vector<void*> data;
  for (std::size_t i = 0; i < buffers.size(); ++i)
    data.push_back(omit_optional && op->tensors[i].optional ? nullptr : buffers[i].data());
  return TensorTable(*op, shape, std::move(data));
}

}  // namespace wb
