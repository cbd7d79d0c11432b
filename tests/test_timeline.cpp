// SPDX-License-Identifier: MIT
#include <gtest/gtest.h>

#include "common/timeline.hpp"

using dvp::Timeline;

TEST(Timeline, PlacesInEarliestGap) {
  Timeline t;
  EXPECT_EQ(t.reserve(100, 50), 100u);   // [100,150)
  EXPECT_EQ(t.reserve(300, 50), 300u);   // [300,350)
  EXPECT_EQ(t.reserve(120, 100), 150u);  // fits in [150,300)
  EXPECT_EQ(t.reserve(120, 100), 350u);  // [150,250) taken, 50 left before 300: too small
  EXPECT_EQ(t.reserve(0, 100), 0u);      // before everything
  EXPECT_EQ(t.busy_total(), 400u);
  EXPECT_EQ(t.reserve(0, 1), 250u);  // 0..150 is full; 250..300 is the first hole left
}

TEST(Timeline, BackToBackReservationsQueue) {
  Timeline t;
  for (int i = 0; i < 1000; ++i) t.reserve(0, 10);
  EXPECT_EQ(t.last_end(), 10000u);
  EXPECT_EQ(t.busy_total(), 10000u);
  EXPECT_EQ(t.reserve(0, 1), 10000u);
}

TEST(Timeline, StartsOnAClockEdgeAndGrowsItsWindow) {
  Timeline t(1000);                         // 1 ns cycles
  EXPECT_EQ(t.reserve(1500, 2000), 2000u);  // rounded up to the next edge
  EXPECT_EQ(t.reserve(0, 1000), 0u);        // the gap before it is still free
  EXPECT_EQ(t.reserve(1000, 1000), 1000u);
  EXPECT_EQ(t.reserve(1000, 1000), 4000u);
  // Far beyond the initial window, and then the gaps left behind are still found.
  EXPECT_EQ(t.reserve(100000000, 5000), 100000000u);
  EXPECT_EQ(t.reserve(5000, 3000), 5000u);
  EXPECT_EQ(t.reserve(99999000, 2000), 100005000u);
  EXPECT_EQ(t.busy_total(), 2000u + 1000 + 1000 + 1000 + 5000 + 3000 + 2000);
}

TEST(Timeline, TurnaroundBetweenKinds) {
  Timeline t;
  t.set_turnaround(/*0->1*/ 7, /*1->0*/ 20);
  EXPECT_EQ(t.reserve(0, 10, 0), 0u);
  EXPECT_EQ(t.reserve(0, 10, 1), 17u);  // after the read, plus 7
  EXPECT_EQ(t.reserve(0, 10, 0), 47u);  // after the write (ends 27), plus 20
  EXPECT_EQ(t.reserve(0, 10, 0), 57u);  // same kind: back to back
  // A write may not squeeze into [10,17): it would need 7 after the read at 0..10 and 20 before
  // the read at 47.
  EXPECT_EQ(t.reserve(10, 5, 1), 67u + 7u);
}
