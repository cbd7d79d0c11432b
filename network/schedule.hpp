// SPDX-License-Identifier: MIT
// The task list of a compiled network: which stream each layer's kernel runs on and the events
// that order it after the layers it needs, so independent branches (a residual block's
// shortcut, an attention's Q, K and V, its heads) run side by side on the task scheduler's
// streams, as CANN's graph engine puts parallel branches on streams of their own.
//
// A kernel needs every earlier kernel that writes memory it reads (a head writing its slice of
// a tensor counts as a writer of it). Streams are chosen greedily in the list's order: a kernel
// continues the stream whose last kernel it needs, else (unless it fills the cores) takes an
// idle stream, else the stream of the latest kernel it needs. A kernel needing one on another
// stream that its own stream is not ordered after yet (vector clocks) waits for an event
// recorded after it. Events are one-shot (a wait clears one), so an event is reused only once
// its last wait is ordered before both the new record and the new wait; with more crossings
// outstanding than events, the list runs on one stream.
// The activation arena is planned after this, from the same order (happens_before): two
// tensors share memory only when every use of one is ordered before every write of the other.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dvp::network {

struct TaskNode {
  std::vector<std::string> reads;   // the memory it reads: tensors' roots (KERNEL.TENSOR)
  std::vector<std::string> writes;  // the memory it writes
  // Its image in a batch: a kernel of another image than the one before it follows that one
  // (branches run side by side within an image, images one after another, in the compiler's
  // order of a batch: images side by side share the L2 and thrash it).
  std::size_t image = 0;
  // An AI CPU kernel: they run one at a time, so each takes the first AI CPU core (the task
  // scheduler's choice), the one the compiled model starts the firmware on.
  bool aicpu = false;
  // Its blocks take every AI Core: a branch beside it would only share the cores, and two such
  // kernels side by side run slower than one after the other (each one's DRAM and L2 streams
  // break the other's: ResNet-50 on the 310, docs/networks.md). It follows the latest kernel it
  // needs on that one's stream instead of taking an idle stream.
  bool fills_cores = false;
};

struct Scheduled {
  int stream = 0;
  std::vector<int> wait;    // events to wait for before the kernel (on its stream)
  std::vector<int> record;  // events to record after it (on its stream)
  std::vector<int> after;   // per stream: the last kernel on it known done before this one starts (-1: none)
};

// What each kernel must follow (indices of earlier kernels).
std::vector<std::vector<int>> task_dependencies(const std::vector<TaskNode>& tasks);

// The streams (at most `streams`, 1..8) and events (ids 0..events-1) of `tasks`, in order.
std::vector<Scheduled> schedule(const std::vector<TaskNode>& tasks, int streams, int events = 64);

// Whether kernel a ends before kernel b starts, by the schedule's streams and events.
inline bool happens_before(const std::vector<Scheduled>& s, int a, int b) {
  return a < b && s[std::size_t(b)].after[std::size_t(s[std::size_t(a)].stream)] >= a;
}

}  // namespace dvp::network
