#include "backend/et/et_memory.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "gguf/gguf.h"

namespace hart::et {

namespace {

constexpr uint64_t kAlign = 64;
constexpr uint64_t kGapJoin = 64 << 10;  // host tensors closer than this share one scratch run

uint64_t round_up(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
uintptr_t host_addr(const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data); }

}  // namespace

EtMemory::EtMemory(Device& dev, uint64_t budget_bytes) : dev_(dev), budget_(budget_bytes) {}

EtMemory::~EtMemory() {
  for (auto& [t, r] : resident_) dev_.free(r.addr);
  if (scratch_) dev_.free(scratch_);
}

EtMemory::Kind EtMemory::kind_of(const Tensor& owner) {
  if (owner.op != Op::NONE || !owner.data || (owner.flags & kFlagInput)) return Kind::Transient;
  if (owner.flags & kFlagWeight) return Kind::Weight;
  if (owner.flags & kFlagState) return Kind::State;
  return Kind::Transient;
}

void EtMemory::make_room(uint64_t bytes) {
  while (resident_bytes_ + bytes > budget_) {
    auto victim = std::find_if(lru_.begin(), lru_.end(), [&](const Tensor* t) {
      const Resident& r = resident_.at(t);
      return r.last_part != part_ && kind_of(*t) == Kind::Weight;  // state is never dropped
    });
    if (victim == lru_.end()) {
      throw Error("ET device memory budget of " + std::to_string(budget_ >> 20) + " MiB is exhausted: " +
                  std::to_string(resident_bytes_ >> 20) + " MiB resident, " + std::to_string(bytes >> 20) +
                  " MiB more needed by one part");
    }
    Resident& r = resident_.at(*victim);
    dev_.free(r.addr);
    resident_bytes_ -= r.bytes;
    resident_.erase(*victim);
    lru_.erase(victim);
  }
}

DeviceAddr EtMemory::resident(const Tensor& owner) {
  const uint64_t bytes = owner.nbytes();
  auto it = resident_.find(&owner);
  if (it != resident_.end() && (it->second.host != owner.data || it->second.bytes != bytes)) {
    // The same tensor now describes other memory (a reloaded weight): drop the old copy.
    dev_.free(it->second.addr);
    resident_bytes_ -= it->second.bytes;
    lru_.erase(it->second.lru);
    resident_.erase(it);
    it = resident_.end();
  }
  if (it == resident_.end()) {
    make_room(bytes);
    Resident r;
    r.addr = dev_.malloc(std::max<uint64_t>(bytes, 1), kAlign);
    r.host = owner.data;
    r.bytes = bytes;
    dev_.memcpy_h2d(r.addr, owner.data, bytes);
    resident_bytes_ += bytes;
    if (kind_of(owner) == Kind::Weight) {
      weight_uploads_++;
      // The device holds the weight now: a weight of a file gives its host pages back, read from
      // the file again only if something reads them (an upload after eviction, an op the CPU
      // takes), so a model run on the device is resident about once on the host, not twice.
      gguf::File::release_pages(owner.data, bytes);
    }
    r.lru = lru_.insert(lru_.end(), &owner);
    it = resident_.emplace(&owner, r).first;
  }
  it->second.last_part = part_;
  lru_.splice(lru_.end(), lru_, it->second.lru);
  return it->second.addr;
}

void EtMemory::begin_part(const std::vector<const Tensor*>& transients) {
  part_++;
  transient_.clear();
  // Runs of host memory: tensors sorted by address, joined when they overlap or nearly touch.
  std::vector<const Tensor*> order(transients);
  std::sort(order.begin(), order.end(), [](const Tensor* a, const Tensor* b) { return host_addr(*a) < host_addr(*b); });
  struct Run {
    uintptr_t start, end;
    uint64_t offset;
  };
  std::vector<Run> runs;
  uint64_t total = 0;
  for (const Tensor* t : order) {
    const uintptr_t start = host_addr(*t), end = start + std::max<size_t>(t->nbytes(), 1);
    if (runs.empty() || start > runs.back().end + kGapJoin) {
      if (!runs.empty()) total += round_up(runs.back().end - runs.back().start);
      runs.push_back({start / kAlign * kAlign, end, total});
    }
    runs.back().end = std::max(runs.back().end, end);
  }
  if (!runs.empty()) total += round_up(runs.back().end - runs.back().start);
  if (total > scratch_bytes_) {
    if (scratch_) dev_.free(scratch_);
    scratch_ = 0;
    scratch_ = dev_.malloc(total, kAlign);
    scratch_bytes_ = total;
  }
  size_t r = 0;
  for (const Tensor* t : order) {
    while (host_addr(*t) >= runs[r].end) r++;
    transient_[t] = scratch_ + runs[r].offset + (host_addr(*t) - runs[r].start);
  }
}

DeviceAddr EtMemory::address(const Tensor& t) {
  const Tensor& owner = t.view_src ? *t.view_src : t;
  const uint64_t offs = t.view_src ? t.view_offs : 0;
  if (kind_of(owner) != Kind::Transient) return resident(owner) + offs;
  const auto it = transient_.find(&owner);
  if (it == transient_.end())
    throw Error(std::string("ET backend: tensor '") + owner.name + "' was not laid out for this part");
  return it->second + offs;
}

}  // namespace hart::et
