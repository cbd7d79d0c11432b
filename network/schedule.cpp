// SPDX-License-Identifier: MIT
#include "schedule.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace dvp::network {

std::vector<std::vector<int>> task_dependencies(const std::vector<TaskNode>& tasks) {
  std::map<std::string, std::vector<int>> writers;  // per root, in order
  std::vector<std::vector<int>> deps;
  int aicpu = -1;  // the last AI CPU kernel
  for (int j = 0; j < int(tasks.size()); ++j) {
    std::set<int> d;
    for (const std::string& r : tasks[std::size_t(j)].reads)
      for (int w : writers[r]) d.insert(w);
    if (j > 0 && tasks[std::size_t(j)].image != tasks[std::size_t(j - 1)].image) d.insert(j - 1);
    if (tasks[std::size_t(j)].aicpu) {
      if (aicpu >= 0) d.insert(aicpu);
      aicpu = j;
    }
    deps.emplace_back(d.begin(), d.end());
    for (const std::string& w : tasks[std::size_t(j)].writes) writers[w].push_back(j);
  }
  return deps;
}

namespace {

using Clock = std::vector<int>;  // per stream: the last kernel on it known done

struct Planner {
  int streams, events;
  const std::vector<TaskNode>& tasks;
  const std::vector<std::vector<int>>& deps;
  std::vector<Scheduled> out;
  std::vector<Clock> done;                  // per kernel: what is done once it is (itself included)
  std::vector<int> last;                    // per stream: its last kernel (-1: idle)
  std::vector<std::pair<int, int>> waiter;  // per event: (stream, kernel) of its last wait (-1: unused)

  const std::vector<int>& needs(int j) const { return deps[std::size_t(j)]; }
  Scheduled& at(int j) { return out[std::size_t(j)]; }
  int pick_stream(int j) const {
    int best = -1;
    for (int p : needs(j))
      if (last[std::size_t(out[std::size_t(p)].stream)] == p) best = std::max(best, p);
    if (best >= 0) return out[std::size_t(best)].stream;
    if (tasks[std::size_t(j)].fills_cores && !needs(j).empty()) return out[std::size_t(needs(j).back())].stream;
    // An idle stream: never used, or its last kernel is one j is ordered after already (the
    // least recently used of them).
    Clock c(std::size_t(streams), -1);
    for (int p : needs(j))
      for (std::size_t k = 0; k < c.size(); ++k) c[k] = std::max(c[k], done[std::size_t(p)][k]);
    int idle = -1;
    for (int s = 0; s < streams; ++s)
      if (last[std::size_t(s)] <= c[std::size_t(s)] && (idle < 0 || last[std::size_t(s)] < last[std::size_t(idle)]))
        idle = s;
    if (idle >= 0) return idle;
    return out[std::size_t(needs(j).empty() ? j - 1 : needs(j).back())].stream;
  }
  // An event free to record after kernel p and wait for on a stream at clock c: its last wait
  // is done before both (a wait queued earlier would take a record meant for another).
  int free_event(int p, const Clock& c) const {
    for (int e = 0; e < events; ++e) {
      const auto [s, k] = waiter[std::size_t(e)];
      if (k < 0 || (done[std::size_t(p)][std::size_t(s)] >= k && c[std::size_t(s)] >= k)) return e;
    }
    return -1;
  }
  // Kernel j on its stream, with the waits it needs; false when no event is free.
  bool place(int j) {
    Scheduled& t = at(j);
    t.stream = pick_stream(j);
    const std::size_t s = std::size_t(t.stream);
    Clock c = last[s] >= 0 ? done[std::size_t(last[s])] : Clock(std::size_t(streams), -1);
    for (int p : needs(j)) {
      if (c[std::size_t(at(p).stream)] >= p) continue;  // ordered already
      const int e = free_event(p, c);
      if (e < 0) return false;
      at(p).record.push_back(e);
      t.wait.push_back(e);
      waiter[std::size_t(e)] = {t.stream, j};
      for (std::size_t k = 0; k < c.size(); ++k) c[k] = std::max(c[k], done[std::size_t(p)][k]);
    }
    t.after = c;
    c[s] = j;
    done[std::size_t(j)] = c;
    last[s] = j;
    return true;
  }
};

}  // namespace

std::vector<Scheduled> schedule(const std::vector<TaskNode>& tasks, int streams, int events) {
  const std::vector<std::vector<int>> deps = task_dependencies(tasks);
  Planner pl{std::max(1, std::min(streams, 8)),
             events,
             tasks,
             deps,
             std::vector<Scheduled>(tasks.size()),
             std::vector<Clock>(tasks.size()),
             {},
             std::vector<std::pair<int, int>>(std::size_t(events), {-1, -1})};
  pl.last.assign(std::size_t(pl.streams), -1);
  for (int j = 0; j < int(tasks.size()); ++j)
    if (!pl.place(j)) return schedule(tasks, 1, events);  // more crossings than events: one stream
  return pl.out;
}

}  // namespace dvp::network
