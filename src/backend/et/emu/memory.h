// The emulator's device memory: one host allocation (reserved, touched lazily) behind device
// addresses starting at kBase, with a first-fit allocator. Every access from a kernel or a copy
// is translated here and must lie inside one live allocation.
#pragma once

#include <cstdint>
#include <map>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "backend/et/device.h"

namespace hart::et::emu {

class DeviceMemory {
 public:
  static constexpr DeviceAddr kBase = 0x8000000000ull;  // address 0 (and small ones) never valid
  static constexpr uint64_t kGranule = 64;               // one cache line

  explicit DeviceMemory(uint64_t bytes, DeviceAddr base = kBase);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  uint64_t size() const { return size_; }
  DeviceAddr base() const { return base_; }
  DeviceAddr allocate(uint64_t bytes, uint64_t align);  // throws hart::Error when full
  void release(DeviceAddr addr);                        // throws for an address not allocated
  // Host view of [addr, addr + bytes) when it lies in one live allocation, else nullptr.
  uint8_t* translate(DeviceAddr addr, uint64_t bytes) const;
  // The live allocations (start, length), by address, and the end of the last one (base() when
  // none): what another simulator needs to mirror the memory (sysemu/).
  std::vector<std::pair<DeviceAddr, uint64_t>> allocations() const;
  DeviceAddr used_end() const;
  // Host view of the memory at addr, unchecked: addr must lie in [base(), base() + size()).
  uint8_t* host_at(DeviceAddr addr) const { return host_ + (addr - base_); }

 private:
  uint8_t* host_ = nullptr;
  uint64_t size_ = 0;
  DeviceAddr base_ = kBase;
  mutable std::shared_mutex mutex_;
  std::map<DeviceAddr, uint64_t> free_;  // start -> length, coalesced
  std::map<DeviceAddr, uint64_t> live_;  // start -> length
};

}  // namespace hart::et::emu
