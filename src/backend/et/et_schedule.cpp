#include "backend/et/et_schedule.h"

namespace hart::et {

namespace {

bool intersect(const std::vector<ByteRange>& a, const std::vector<ByteRange>& b) {
  for (const ByteRange& x : a)
    for (const ByteRange& y : b)
      if (x.begin < y.end && y.begin < x.end) return true;
  return false;
}

// What the calls placed in one phase touch, together.
struct Phase {
  CallAccess access;
  bool conflicts(const CallAccess& c) const {
    return access.alone || c.alone || intersect(c.reads, access.writes) || intersect(c.writes, access.writes) ||
           intersect(c.writes, access.reads);
  }
  void add(const CallAccess& c) {
    access.reads.insert(access.reads.end(), c.reads.begin(), c.reads.end());
    access.writes.insert(access.writes.end(), c.writes.begin(), c.writes.end());
    access.alone = access.alone || c.alone;
  }
};

}  // namespace

std::vector<int> schedule_phases(const std::vector<CallAccess>& calls) {
  std::vector<Phase> phases;
  std::vector<int> out;
  out.reserve(calls.size());
  for (const CallAccess& c : calls) {
    int p = int(phases.size());  // the first phase above the last one c conflicts with
    while (p > 0 && !phases[size_t(p - 1)].conflicts(c)) p--;
    if (p == int(phases.size())) phases.emplace_back();
    phases[size_t(p)].add(c);
    out.push_back(p);
  }
  return out;
}

}  // namespace hart::et
