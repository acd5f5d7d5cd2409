// The uberkernel's phases: conflicting calls in order, independent ones together.
#include "backend/et/et_schedule.h"

#include <gtest/gtest.h>

namespace hart::et {
namespace {

CallAccess call(std::vector<ByteRange> reads, std::vector<ByteRange> writes, bool alone = false) {
  return {std::move(reads), std::move(writes), alone};
}

constexpr ByteRange A{0, 64}, B{64, 128}, C{128, 192}, X{1000, 1064}, Y{2000, 2064};

TEST(EtSchedule, ConflictsOrderCallsAndTheRestShareAPhase) {
  const std::vector<int> p = schedule_phases({
      call({X}, {A}),      // 0
      call({A}, {B}),      // reads what 0 wrote: after it
      call({X}, {C}),      // independent of both: with 0
      call({Y}, {X}),      // overwrites what 0 and 2 read: after them
      call({B}, {A}),      // reads 1's result, overwrites 0's: after 1
      call({X}, {}, true), // the scratchpad kernel: alone, after everything
      call({Y}, {Y}),      // independent, but nothing crosses an alone call
  });
  EXPECT_EQ(p, (std::vector<int>{0, 1, 0, 1, 2, 3, 4}));
}

TEST(EtSchedule, PartialOverlapConflictsAndTouchingRangesDoNot) {
  const ByteRange half{32, 96}, next{64, 100};
  EXPECT_EQ(schedule_phases({call({}, {A}), call({half}, {Y})}), (std::vector<int>{0, 1}));
  EXPECT_EQ(schedule_phases({call({}, {A}), call({next}, {Y})}), (std::vector<int>{0, 0}));
  EXPECT_EQ(schedule_phases({call({}, {A}), call({}, {half})}), (std::vector<int>{0, 1}));
}

// A call goes right after the last phase it conflicts with, even below the top phase.
TEST(EtSchedule, IndependentCallsFillEarlierPhases) {
  const std::vector<int> p = schedule_phases({
      call({}, {A}), call({A}, {B}), call({B}, {C}),  // a chain: phases 0, 1, 2
      call({A}, {Y}),                                  // needs only the first: phase 1
  });
  EXPECT_EQ(p, (std::vector<int>{0, 1, 2, 1}));
}

}  // namespace
}  // namespace hart::et
