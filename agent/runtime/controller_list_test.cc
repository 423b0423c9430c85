#include "agent/runtime/controller_list.h"

#include "gtest/gtest.h"

namespace fleetbench::agent {
namespace {

TEST(ControllerListTest, OneAddressWaitsAfterEveryEnd) {
  ControllerList list({"a:1"});
  EXPECT_EQ(list.current(), "a:1");
  EXPECT_TRUE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "a:1");
  EXPECT_TRUE(list.SessionEnded(true));
  EXPECT_EQ(list.current(), "a:1");
}

TEST(ControllerListTest, AnUnansweredDialGoesToTheNextAtOnceAndARoundWaits) {
  ControllerList list({"a:1", "b:2", "c:3"});
  EXPECT_EQ(list.current(), "a:1");
  EXPECT_FALSE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "b:2");
  EXPECT_FALSE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "c:3");
  // None answered: the backoff, then the round starts again at the first.
  EXPECT_TRUE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "a:1");
  EXPECT_FALSE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "b:2");
}

TEST(ControllerListTest, AWelcomedSessionIsDialledAgainAtItsAddressFirst) {
  ControllerList list({"a:1", "b:2"});
  EXPECT_FALSE(list.SessionEnded(false));  // a is down; b leads
  ASSERT_EQ(list.current(), "b:2");
  EXPECT_TRUE(list.SessionEnded(true));  // b's session ended: back off, b again
  EXPECT_EQ(list.current(), "b:2");
  // b is gone: a (which leads again) at once, without a second backoff.
  EXPECT_FALSE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "a:1");
  // The round counts from the welcome: a failing too completes it.
  EXPECT_TRUE(list.SessionEnded(false));
  EXPECT_EQ(list.current(), "b:2");
}

}  // namespace
}  // namespace fleetbench::agent
