#include "backend/et/emu/memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "backend/et/hex.h"
#include "common/error.h"

namespace hart::et::emu {

DeviceMemory::DeviceMemory(uint64_t bytes, DeviceAddr base)
    : size_((bytes + kGranule - 1) / kGranule * kGranule), base_(base) {
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw Error("cannot reserve " + std::to_string(size_) + " bytes of emulated device memory: " + std::strerror(errno));
  host_ = static_cast<uint8_t*>(p);
  free_[base_] = size_;
}

DeviceMemory::~DeviceMemory() { munmap(host_, size_); }

DeviceAddr DeviceMemory::allocate(uint64_t bytes, uint64_t align) {
  if (align < kGranule || (align & (align - 1)) != 0) align = std::max<uint64_t>(kGranule, std::bit_ceil(align));
  const uint64_t need = std::max<uint64_t>(kGranule, (bytes + kGranule - 1) / kGranule * kGranule);
  std::unique_lock lock(mutex_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const DeviceAddr start = it->first, end = it->first + it->second;
    const DeviceAddr aligned = (start + align - 1) / align * align;
    if (aligned + need > end) continue;
    free_.erase(it);
    if (aligned > start) free_[start] = aligned - start;
    if (aligned + need < end) free_[aligned + need] = end - (aligned + need);
    live_[aligned] = need;
    return aligned;
  }
  throw Error("device out of memory: cannot allocate " + std::to_string(bytes) + " bytes");
}

void DeviceMemory::release(DeviceAddr addr) {
  std::unique_lock lock(mutex_);
  const auto it = live_.find(addr);
  if (it == live_.end()) throw Error("free of " + hex(addr) + ", which is not a device allocation");
  DeviceAddr start = addr;
  uint64_t len = it->second;
  live_.erase(it);
  // Coalesce with the free neighbours on both sides.
  auto next = free_.lower_bound(start);
  if (next != free_.end() && next->first == start + len) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  free_[start] = len;
}

uint8_t* DeviceMemory::translate(DeviceAddr addr, uint64_t bytes) const {
  std::shared_lock lock(mutex_);
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return nullptr;
  --it;
  const uint64_t offset = addr - it->first;
  if (offset > it->second || bytes > it->second - offset) return nullptr;
  return host_ + (addr - base_);
}

std::vector<std::pair<DeviceAddr, uint64_t>> DeviceMemory::allocations() const {
  std::shared_lock lock(mutex_);
  return {live_.begin(), live_.end()};
}

DeviceAddr DeviceMemory::used_end() const {
  std::shared_lock lock(mutex_);
  return live_.empty() ? base_ : live_.rbegin()->first + live_.rbegin()->second;
}

}  // namespace hart::et::emu
