// SPDX-License-Identifier: MIT
// The task scheduler: blocks spread over the AI Cores by policy, waves when there are more
// blocks than cores, events between streams, and completion timestamps worked out from the
// configured dispatch and completion latencies and the memory's (it reads its queues there).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <map>

#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "aicore/aicore_ctrl.hpp"
#include "aicore/assembler.hpp"
#include "helpers.hpp"
#include "stimulus.hpp"
#include "ts/ts.hpp"

using namespace dvp;

namespace {

constexpr Tick kMemLat = 50 * 1000;              // 50 ns, the AI Cores' and the scheduler's memory
constexpr std::uint64_t kDramBase = 0x80000000;  // the scheduler's queues
constexpr std::uint64_t kImage = 0x1000, kArgs = 0x8000;
constexpr std::uint64_t kHole = 0xf0000000;  // from here up nothing answers

// Fixed-latency memory several cores share; an address error from kHole up.
struct SharedMemory : sc_core::sc_module {
  tlm_utils::multi_passthrough_target_socket<SharedMemory> socket{"socket"};
  std::map<std::uint64_t, std::uint8_t> bytes;
  explicit SharedMemory(sc_core::sc_module_name n) : sc_module(n) {
    socket.register_b_transport(this, &SharedMemory::b_transport);
  }
  void b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
    if (p.get_address() + p.get_data_length() > kHole) return p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    for (unsigned i = 0; i < p.get_data_length(); ++i) {
      if (p.is_write())
        bytes[p.get_address() + i] = p.get_data_ptr()[i];
      else
        p.get_data_ptr()[i] = bytes.count(p.get_address() + i) ? bytes[p.get_address() + i] : 0;
    }
    d += to_sc(kMemLat);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

struct BlockRun {
  unsigned core, block;
  Tick start, end;
};

// `cores` AI Cores, the scheduler, and a thread that records every block's core and times.
struct Bench {
  aicore::AiCoreConfig cfg = aicore::AiCoreConfig::from(test::preset_platform("ascend310").at("aicore"));
  ts::TsConfig tcfg;
  SharedMemory mem{"mem"};
  std::vector<std::unique_ptr<aicore::AiCore>> cores;
  std::vector<std::unique_ptr<aicore::AiCoreCtrl>> ctrls;  // their control registers, on `bus`
  mmio::MmioBus bus{"bus"};
  irq::IrqController irq{"irq", 1, 0};
  std::unique_ptr<ts::TaskScheduler> ts;
  std::vector<BlockRun> runs;
  test::Stimulus stim{"stim"};
  test::Stimulus irq_side{"irq_side"};  // the interrupt controller's registers are not used here
  std::uint32_t code_bytes = 0, entry = 0;

  Bench(unsigned n, const char* policy) {
    tcfg.dispatch_ns = 100;
    tcfg.completion_ns = 200;
    tcfg.policy = *ts::dispatch_policies().find(policy);
    std::vector<aicore::AiCore*> raw;
    for (unsigned i = 0; i < n; ++i) {
      cores.push_back(std::make_unique<aicore::AiCore>(("core" + std::to_string(i)).c_str(), cfg, i, 128, true));
      cores.back()->bus.bind(mem.socket);
      raw.push_back(cores.back().get());
    }
    for (unsigned i = 0; i < n; ++i) {
      ctrls.push_back(std::make_unique<aicore::AiCoreCtrl>(("ctrl" + std::to_string(i)).c_str(), *cores[i], 0));
      bus.attach(*ctrls.back(), 0x100 * i);
    }
    ts::TaskScheduler::Wiring w;
    w.cores = raw;
    w.irq = &irq;
    w.irq_line = 16;
    w.dvpp_rings = kDramBase + 0x40000;
    w.ctrl_stride = 0x100;
    ts = std::make_unique<ts::TaskScheduler>("ts", tcfg, std::move(w));
    ts->ctrl.bind(bus.cpus);
    ts->mem.bind(mem.socket);
    stim.socket.bind(ts->bus);
    irq_side.socket.bind(irq.bus);
    irq_side.body = [](test::Stimulus&) {};
    // A kernel that spins a fixed number of iterations: every block takes the same time.
    aicore::Image img = aicore::assemble("li x1, 200\nloop:\naddi x1, x1, -1\nbne x1, x0, loop\nend\n", "spin.s");
    auto b = img.bytes();
    for (std::size_t i = 32; i < b.size(); ++i) mem.bytes[kImage + i - 32] = b[i];
    code_bytes = std::uint32_t(b.size() - 32);
    entry = img.entry;
    for (unsigned i = 0; i < n; ++i) {
      sc_core::sc_spawn_options o;
      sc_core::sc_spawn(
          [this, i] {
            for (;;) {
              wait(cores[i]->finished());
              runs.push_back({i, cores[i]->launched().block_id, cores[i]->block_start(), now_tick()});
            }
          },
          ("watch" + std::to_string(i)).c_str(), &o);
    }
  }
  dvp_task kernel(unsigned stream, unsigned blocks) {
    dvp_task t{};
    t.type = DVP_TASK_KERNEL;
    t.stream = stream;
    t.image = kImage;
    t.code_bytes = code_bytes;
    t.entry = entry;
    t.blocks = blocks;
    t.args = kArgs;
    return t;
  }
  // Queues in the memory: stream s at 0x1000 * (s + 1), completions at 0x10000.
  void setup_queues(test::Stimulus& s) {
    // Register writes through the scheduler's MMIO socket (its access time is 0 here).
    auto put = [&s](std::uint32_t off, std::uint32_t v) { s.post(true, off, reinterpret_cast<std::uint8_t*>(&v), 4); };
    put(0x0, std::uint32_t(kDramBase + 0x10000));
    put(0x4, 0);
    put(0x8, 64);
    for (unsigned st = 0; st < 2; ++st) {
      put(0x100 + 0x40 * st, std::uint32_t(kDramBase + 0x1000 * (st + 1)));
      put(0x104 + 0x40 * st, 0);
      put(0x108 + 0x40 * st, 16);
    }
    ring = [this, &s](unsigned st, const std::vector<dvp_task>& tasks) {
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        dvp_task t = tasks[i];
        t.id = std::uint32_t(st * 100 + i);
        store(kDramBase + 0x1000 * (st + 1) + i * sizeof t, &t, sizeof t);
      }
      std::uint32_t tail = std::uint32_t(tasks.size());
      s.post(true, 0x10c + 0x40 * st, reinterpret_cast<std::uint8_t*>(&tail), 4);
    };
  }
  std::function<void(unsigned, const std::vector<dvp_task>&)> ring;
  void store(std::uint64_t addr, const void* data, std::size_t len) {
    for (std::size_t k = 0; k < len; ++k) mem.bytes[addr + k] = static_cast<const std::uint8_t*>(data)[k];
  }
  dvp_completion completion(unsigned i) {
    dvp_completion c;
    auto* bytes = reinterpret_cast<std::uint8_t*>(&c);
    for (std::size_t k = 0; k < sizeof c; ++k) bytes[k] = mem.bytes[kDramBase + 0x10000 + i * sizeof c + k];
    return c;
  }
};

}  // namespace

TEST(TaskScheduler, BlocksSpreadOverAllCoresAtTheDispatchLatency) {
  Bench b(4, "round_robin");
  Tick rung = 0;
  b.stim.body = [&](test::Stimulus& s) {
    b.setup_queues(s);
    s.pause(1000 * 1000);  // 1 us
    rung = now_tick();
    b.ring(0, {b.kernel(0, 4)});
  };
  sc_core::sc_start();
  ASSERT_EQ(b.runs.size(), 4u);
  const Tick d = 100 * 1000;
  Tick last_end = 0;
  for (const BlockRun& r : b.runs) {
    // Block i on core i (round robin from core 0), started after the entry's read from memory,
    // its dispatch and i + 1 block dispatches, on the next core clock edge.
    EXPECT_EQ(r.core, r.block);
    EXPECT_EQ(r.start, b.cfg.clock.align_up(rung + kMemLat + d + (r.block + 1) * d)) << "block " << r.block;
    last_end = std::max(last_end, r.end);
  }
  const dvp_completion c = b.completion(0);
  EXPECT_EQ(c.status, std::uint32_t(DVP_OK));
  EXPECT_EQ(c.start_ns, (rung + kMemLat + d) / 1000);
  EXPECT_EQ(c.end_ns, (last_end + 200 * 1000) / 1000);
}

TEST(TaskScheduler, MoreBlocksThanCoresRunInWavesOnTheFirstFreeCore) {
  Bench b(2, "first_free");
  b.stim.body = [&](test::Stimulus& s) {
    b.setup_queues(s);
    b.ring(0, {b.kernel(0, 6)});
  };
  sc_core::sc_start();
  ASSERT_EQ(b.runs.size(), 6u);
  std::map<unsigned, unsigned> per_core;
  for (const BlockRun& r : b.runs) ++per_core[r.core];
  EXPECT_EQ(per_core[0], 3u);
  EXPECT_EQ(per_core[1], 3u);
  // Never more than two at once, and each later block waits for one to end plus a dispatch.
  for (const BlockRun& r : b.runs) {
    unsigned overlapping = 0;
    for (const BlockRun& o : b.runs) overlapping += o.start < r.end && r.start < o.end;
    EXPECT_LE(overlapping, 2u);
    if (r.block >= 2) {
      Tick freed = 0;
      for (const BlockRun& o : b.runs)
        if (o.core == r.core && o.end <= r.start) freed = std::max(freed, o.end);
      EXPECT_GE(r.start, freed + 100 * 1000) << "block " << r.block;
    }
  }
}

TEST(TaskScheduler, AnEventOrdersTwoStreams) {
  Bench b(2, "round_robin");
  b.stim.body = [&](test::Stimulus& s) {
    b.setup_queues(s);
    dvp_task wait{}, rec{};
    wait.type = DVP_TASK_WAIT;
    wait.event = 5;
    rec.type = DVP_TASK_RECORD;
    rec.event = 5;
    b.ring(1, {wait, b.kernel(1, 1)});  // stream 1 first: it must still wait
    s.pause(10 * 1000);
    b.ring(0, {b.kernel(0, 2), rec});
  };
  sc_core::sc_start();
  ASSERT_EQ(b.runs.size(), 3u);
  // Completions in order of time: stream 0's kernel, its record, stream 1's wait, its kernel.
  std::vector<std::uint32_t> ids;
  for (unsigned i = 0; i < 4; ++i) ids.push_back(b.completion(i).id);
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{0, 1, 100, 101}));
  const dvp_completion rec_done = b.completion(1), k1 = b.completion(3);
  EXPECT_GE(k1.start_ns, rec_done.end_ns);
}

// Two one-block kernels one after the other on three cores; the cores they ran on. (A SystemC
// process elaborates once, so each policy has its own test.)
static std::vector<unsigned> two_kernels_on(const char* policy) {
  Bench b(3, policy);
  b.stim.body = [&](test::Stimulus& s) {
    b.setup_queues(s);
    b.ring(0, {b.kernel(0, 1), b.kernel(0, 1)});
  };
  sc_core::sc_start();
  std::vector<unsigned> cores;
  for (const BlockRun& r : b.runs) cores.push_back(r.core);
  return cores;
}

TEST(TaskScheduler, RoundRobinMovesOnToTheNextCore) {
  EXPECT_EQ(two_kernels_on("round_robin"), (std::vector<unsigned>{0, 1}));
}

TEST(TaskScheduler, FirstFreeTakesTheLowestFreeCore) {
  EXPECT_EQ(two_kernels_on("first_free"), (std::vector<unsigned>{0, 0}));
}

// A completion queue where nothing answers: the first completion's write fails, and the run
// stops naming the queue, the address, its size and the response.
TEST(TaskScheduler, ACompletionQueueNothingAnswersForStopsTheRun) {
  Bench b(1, "round_robin");
  b.stim.body = [&](test::Stimulus& s) {
    b.setup_queues(s);
    std::uint32_t lo = std::uint32_t(kHole + 0x100);
    s.post(true, 0x0, reinterpret_cast<std::uint8_t*>(&lo), 4);  // CQ_BASE_LO
    dvp_task rec{};
    rec.type = DVP_TASK_RECORD;
    b.ring(0, {rec});
  };
  sc_core::sc_start();
  EXPECT_EQ(b.ts->error(),
            "ts: writing the completion queue entry at 0xf0000100 (128 bytes) failed: TLM_ADDRESS_ERROR_RESPONSE");
}

namespace {

// DVPP as the scheduler sees it: registers on its control bus; a doorbell on engine e completes
// the command `latency[e]` later, writing its status into the ring slot and notifying.
struct StubDvpp : sc_core::sc_module {
  tlm_utils::simple_target_socket<StubDvpp> socket{"socket"};
  SharedMemory& mem;
  std::map<unsigned, Tick> latency;
  std::map<unsigned, std::uint64_t> ring;  // SQ_BASE_LO per engine
  sc_core::sc_event done;
  StubDvpp(sc_core::sc_module_name n, SharedMemory& m) : sc_module(n), mem(m) {
    socket.register_b_transport(this, &StubDvpp::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    std::uint32_t v = 0;
    std::memcpy(&v, p.get_data_ptr(), 4);
    const auto off = std::uint32_t(p.get_address()), e = (off - 0x100) / 0x40;
    if ((off - 0x100) % 0x40 == 0) ring[e] = v;  // SQ_BASE_LO (the rings are below 4 GiB here)
    if ((off - 0x100) % 0x40 != 0xc) return;
    const std::uint64_t slot = ring[e] + (v - 1) * sizeof(dvpp_cmd);
    sc_core::sc_spawn([this, e, slot, at = d] {
      wait(at + to_sc(latency[e]));
      const std::uint32_t status = DVPP_DONE;
      for (unsigned k = 0; k < 4; ++k)
        mem.bytes[slot + offsetof(dvpp_cmd, status) + k] = std::uint8_t(status >> (8 * k));
      done.notify(sc_core::SC_ZERO_TIME);
    });
  }
};

}  // namespace

// Two streams' media commands on two engines that finish 10 ns apart, the second while the
// stream waiting for it reads its slot after the first's completion (a 50 ns read): its
// completion must not be lost; both tasks complete, DONE.
TEST(TaskScheduler, DvppCompletionsCloseTogetherAreNotLost) {
  Bench b(1, "round_robin");
  StubDvpp dv("dvpp", b.mem);
  dv.latency = {{DVPP_JPEGD, 1000 * 1000}, {DVPP_VPC, 1010 * 1000}};
  b.bus.attach(dv.socket, "dvpp", "dvpp", 0x10000, 0x400, 0);
  b.ts->attach_dvpp(0x10000, dv.done);
  b.stim.body = [&](test::Stimulus& s) {
    b.setup_queues(s);
    for (unsigned st = 0; st < 2; ++st) {
      dvpp_cmd cmd{};
      cmd.tag = st;
      b.store(kDramBase + 0x20000 + st * 0x1000, &cmd, sizeof cmd);
      dvp_task t{};
      t.type = DVP_TASK_DVPP, t.entry = st ? DVPP_VPC : DVPP_JPEGD, t.args = kDramBase + 0x20000 + st * 0x1000;
      b.ring(st, {t});
    }
  };
  sc_core::sc_start();
  EXPECT_EQ(b.ts->error(), "");
  ASSERT_EQ(b.ts->records().size(), 2u);
  for (const auto& r : b.ts->records()) EXPECT_FALSE(r.fault) << r.fault_text;
}
