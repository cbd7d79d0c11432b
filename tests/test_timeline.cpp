#include <gtest/gtest.h>

#include "common/timeline.hpp"

using dvp::Timeline;

TEST(Timeline, PlacesInEarliestGap) {
  Timeline t;
  EXPECT_EQ(t.reserve(100, 50), 100u);  // [100,150)
  EXPECT_EQ(t.reserve(300, 50), 300u);  // [300,350)
  EXPECT_EQ(t.reserve(120, 100), 150u); // fits in [150,300)
  EXPECT_EQ(t.reserve(120, 100), 350u); // [150,250) taken, 50 left before 300: too small
  EXPECT_EQ(t.reserve(0, 100), 0u);     // before everything
  EXPECT_EQ(t.busy_total(), 400u);
}

TEST(Timeline, MergesTouchingIntervals) {
  Timeline t;
  for (int i = 0; i < 1000; ++i) t.reserve(0, 10);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.last_end(), 10000u);
}

TEST(Timeline, TurnaroundBetweenKinds) {
  Timeline t;
  t.set_turnaround(/*0->1*/ 7, /*1->0*/ 20);
  EXPECT_EQ(t.reserve(0, 10, 0), 0u);
  EXPECT_EQ(t.reserve(0, 10, 1), 17u);   // after the read, plus 7
  EXPECT_EQ(t.reserve(0, 10, 0), 47u);   // after the write (ends 27), plus 20
  EXPECT_EQ(t.reserve(0, 10, 0), 57u);   // same kind: back to back
  // A write may not squeeze into [10,17): it would need 7 after the read at 0..10 and 20 before
  // the read at 47.
  EXPECT_EQ(t.reserve(10, 5, 1), 67u + 7u);
}
