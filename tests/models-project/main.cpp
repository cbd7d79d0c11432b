// SPDX-License-Identifier: MIT
// An AI Core, an L2 slice and a DRAM controller from the installed davinci-vp package, wired in
// this program's own sc_main (no ring, no SoC): the AI Core's bus straight into the slice, the
// slice's memory side into the controller. A vector add assembled from text runs on the core;
// its output is checked against a loop here, and the time and traffic are printed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <systemc>

#include "aicore/aicore.hpp"
#include "aicore/assembler.hpp"
#include "aicore/numeric.hpp"
#include "cache/l2_slice.hpp"
#include "common/system.hpp"
#include "dram/address_map.hpp"
#include "dram/controller.hpp"
#include "dram/storage.hpp"
#include "scenario.hpp"

using namespace dvp;

namespace {

constexpr std::uint64_t kElems = 8192;  // f16 elements per vector: one 16 KiB tile
const char* kKernel = R"(
    mfspr x1, argbase
    ld.d  x2, 0(x1)          # x
    ld.d  x3, 8(x1)          # y
    ld.d  x4, 16(x1)         # z
    li    x11, 0x200001      # DataCopyCfg: 1 block of 512 x 32 B
    li64  x12, 0x0008080801010140
    li    x13, 128
    setmaskn x13
    li    x20, 0
    li    x21, 16384
    li    x22, 32768
    copy.gm2ub x20, x2, x11
    copy.gm2ub x21, x3, x11
    setflag  mte2, v, 0
    waitflag mte2, v, 0
    vadd.f16 x22, x20, x21, x12
    setflag  v, mte3, 0
    waitflag v, mte3, 0
    copy.ub2gm x4, x22, x11
    end
)";

// Starts one block and waits for it: what the task scheduler does in the SoC.
struct Host : sc_core::sc_module {
  aicore::AiCore& core;
  aicore::Launch launch;
  Host(sc_core::sc_module_name n, aicore::AiCore& c, aicore::Launch l) : sc_module(n), core(c), launch(l) {
    SC_HAS_PROCESS(Host);
    SC_THREAD(run);
  }
  void run() {
    core.start(launch);
    wait(core.finished());
  }
};

}  // namespace

int sc_main(int argc, char** argv) {
  setenv("DVP_PRESETS", PRESETS_DIR, 0);
  if (argc != 2) return std::fprintf(stderr, "usage: vadd_on_models SCENARIO.yaml\n"), 2;
  System system;  // trace and statistics of the models below
  System::Scope scope(system);
  const platform::Scenario s = platform::load_scenario(
      argv[1],
      platform::Overrides{"ascend310", {"platform.l2.slices=1", "platform.dram.controllers=1"}, false, {}, ""});
  const cfg::Node& plat = s.root.at("platform");
  const dram::Config dram_cfg = dram::Config::from(plat.at("dram"));
  const cache::L2Config l2_cfg = cache::L2Config::from(plat.at("l2"));
  const aicore::AiCoreConfig core_cfg = aicore::AiCoreConfig::from(plat.at("aicore"));
  const std::uint64_t base = plat.at("memory").get_uint("dram_base");

  dram::AddressMapper mapper(dram_cfg.geo, dram_cfg.mapping, nullptr, dram_cfg.bank_xor, dram_cfg.channel_xor);
  dram::Storage storage(dram_cfg.geo.capacity());
  dram::Controller mc("mc0", dram_cfg, mapper, storage, base, 0);
  // Tags only: the data goes through to DRAM's bytes, where this program checks it (timing is the same).
  cache::L2Slice l2("hn0", l2_cfg, 0, false);
  aicore::AiCore core("core0", core_cfg, 0, l2_cfg.line_bytes, true);
  core.bus.bind(l2.target);
  l2.memory.bind(mc.socket);

  // DRAM: the kernel at 0, x, y, z and the argument table after it.
  const aicore::Image img = aicore::assemble(kKernel, "vadd");
  const std::vector<std::uint8_t> code = img.bytes();
  std::memcpy(storage.data(), code.data() + 32, code.size() - 32);  // the image less its header
  const std::uint64_t x = 0x10000, y = x + 2 * kElems, z = y + 2 * kElems, args = z + 2 * kElems;
  for (std::uint64_t i = 0; i < kElems; ++i) {
    aicore::num::store(storage.data() + x + 2 * i, aicore::DType::F16, double(i % 97) / 8);
    aicore::num::store(storage.data() + y + 2 * i, aicore::DType::F16, -double(i % 31) / 4);
  }
  const std::uint64_t table[3] = {base + x, base + y, base + z};
  std::memcpy(storage.data() + args, table, sizeof table);
  Host host("host", core, aicore::Launch{base, code.size() - 32, img.entry, 0, 1, base + args});
  sc_core::sc_start();

  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < kElems; ++i) {
    std::uint8_t want[2];
    aicore::num::store(want, aicore::DType::F16, double(i % 97) / 8 - double(i % 31) / 4);
    bad += std::memcmp(want, storage.data() + z + 2 * i, 2) != 0;
  }
  std::printf("blocks %llu, %llu of %llu elements wrong, %llu L2 misses, %.3f us simulated\n",
              (unsigned long long)core.blocks_done(), (unsigned long long)bad, (unsigned long long)kElems,
              (unsigned long long)l2.misses(), double(now_tick()) / 1e6);
  return core.blocks_done() == 1 && bad == 0 ? 0 : 1;
}
