// The CUDA device as the host sees it: an owning handle to a block of device memory and
// the free/total memory of the current device. Allocation lives here (host side), so the
// kernels never allocate. CUDA builds only; cuda_status() in backend.h works everywhere.
#pragma once

#include <cstddef>

namespace steer {

// one device allocation, freed when the handle dies; move-only
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);  // throws std::runtime_error on failure
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// free and total memory of the current device [bytes] (cudaMemGetInfo)
struct DeviceMemory {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
};
DeviceMemory device_memory();

}  // namespace steer
