// SPDX-License-Identifier: MIT
#include "soc.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "common/error.hpp"
#include "peripherals.hpp"
#include "vecacc_regs.h"

namespace dvp::platform {

static std::uint32_t spread(std::uint32_t i, std::uint32_t count, std::uint32_t stops) {
  return std::uint32_t((std::uint64_t(i) * stops) / count);
}

Soc::Soc(sc_core::sc_module_name name, const Scenario& s) : sc_module(name) {
  const cfg::Node& plat = s.root.at("platform");
  read_config(s);
  check_cross_rules(plat);
  build_memory_system(s);
  build_aicores(plat);
  if (const cfg::Node* d = plat.find("dvpp")) build_dvpp(*d, s);
  if (const cfg::Node* m = s.root.find("dvpp"); m && m->is_seq() && !m->items().empty() && !dvpp_)
    m->fail("the scenario runs media jobs but the platform has no platform.dvpp section");
  build_launcher(s);
  if (const cfg::Node* c = plat.find("cpu"))
    build_cpus(*c, s.root.find("firmware"), s);
  else if (const cfg::Node* fw = s.root.find("firmware"))
    fw->fail("the scenario runs firmware but the platform has no platform.cpu section");
  if (dvpp_) wire_dvpp(plat);
  if (const cfg::Node* r = plat.find("rtl"); r && r->is_seq()) build_rtl(*r, s);
  if (const cfg::Node* v = plat.find("vecacc")) build_vecacc(*v);
  build_requesters(s);
}

void Soc::read_config(const Scenario& s) {
  const cfg::Node& plat = s.root.at("platform");
  dram_cfg_ = dram::Config::from(plat.at("dram"));
  l2_cfg_ = cache::L2Config::from(plat.at("l2"));
  ring_cfg_ = ring::RingConfig::from(plat.at("ring"));
  dram_base_ = plat.at("memory").get_uint("dram_base");
  const Fidelity fidelity = memory_fidelities().parse(plat.at("memory").at("fidelity"));
  dram_cfg_.fidelity = ring_cfg_.fidelity = fidelity;
  timing_only_ = s.root.at("run").get_bool("timing_only");
  tlm_checks_ = s.root.at("debug").get_bool("tlm_checks");
  mapper_ =
      std::make_unique<dram::AddressMapper>(dram_cfg_.geo, dram_cfg_.mapping, &plat.at("dram").at("address_mapping"),
                                            dram_cfg_.bank_xor, dram_cfg_.channel_xor);
  hash_ = cache::SliceHash(l2_cfg_.slices, l2_cfg_.line_bytes);
}

// Rules that join two models' parameters, checked here where both are known.
void Soc::check_cross_rules(const cfg::Node& plat) const {
  if ((1ull << mapper_->channel_granule_bits()) < l2_cfg_.line_bytes)
    plat.at("dram")
        .at("address_mapping")
        .fail("channels interleave every " + std::to_string(1ull << mapper_->channel_granule_bits()) +
              " bytes, less than an L2 line (" + std::to_string(l2_cfg_.line_bytes) +
              " B): a line fill would span controllers. Put more column bits below 'channel'.");
  if (dram_base_ % l2_cfg_.line_bytes) plat.at("memory").at("dram_base").fail("must be aligned to the L2 line size");
  auto check_stops = [&](const std::vector<std::uint32_t>& v, std::size_t want, const char* key) {
    if (!v.empty() && v.size() != want)
      plat.at("ring").at(key).fail("lists " + std::to_string(v.size()) + " stops for " + std::to_string(want) +
                                   (std::string(key) == "home_node_stops" ? " L2 slices" : " DRAM controllers"));
  };
  check_stops(ring_cfg_.home_node_stops, l2_cfg_.slices, "home_node_stops");
  check_stops(ring_cfg_.memory_node_stops, dram_cfg_.controllers, "memory_node_stops");
}

// Ring, L2 slices (home nodes) and DRAM controllers (memory nodes).
void Soc::build_memory_system(const Scenario& s) {
  storage_ = std::make_unique<dram::Storage>(dram_cfg_.geo.capacity());
  ring_ = std::make_unique<ring::Ring>("ring", ring_cfg_);
  ring_->set_tlm_checks(tlm_checks_);
  ring_->set_router([this](std::uint64_t a, unsigned src) { return route(a, src); });
  l2_level_ = std::make_unique<Level>("l2", [&] {
    for (std::uint32_t i = 0; i < l2_cfg_.slices; ++i) {
      std::uint32_t stop =
          ring_cfg_.home_node_stops.empty() ? spread(i, l2_cfg_.slices, ring_cfg_.stops) : ring_cfg_.home_node_stops[i];
      // With firmware on the Arm cores, the L2 keeps tags only and data stays in DRAM's backing
      // store: the cores reach DRAM by direct pointer and must see what the AI Cores wrote (the
      // hardware's L2 is coherent with them). Timing is the same either way.
      auto slice = std::make_unique<cache::L2Slice>(("hn" + std::to_string(i)).c_str(), l2_cfg_, i,
                                                    !timing_only_ && !s.root.find("firmware"));
      hn_dst_.push_back(int(ring_->connect_target(slice->target, stop, slice->name())));
      unsigned src = ring_->connect_initiator(slice->memory, stop, slice->name());
      src_is_hn_.resize(src + 1, false);
      src_is_hn_[src] = true;
      placement_.push_back({slice->name(), stop, "home node (L2 slice)"});
      l2_.push_back(std::move(slice));
    }
  });
  dram_level_ = std::make_unique<Level>("dram", [&] {
    for (std::uint32_t i = 0; i < dram_cfg_.controllers; ++i) {
      std::uint32_t stop = ring_cfg_.memory_node_stops.empty() ? spread(i, dram_cfg_.controllers, ring_cfg_.stops)
                                                               : ring_cfg_.memory_node_stops[i];
      auto mc = std::make_unique<dram::Controller>(("mc" + std::to_string(i)).c_str(), dram_cfg_, *mapper_, *storage_,
                                                   dram_base_, i);
      mn_dst_.push_back(int(ring_->connect_target(mc->socket, stop, mc->name())));
      placement_.push_back({mc->name(), stop, "memory node (DRAM controller)"});
      mcs_.push_back(std::move(mc));
    }
  });
}

// AI Cores: requesters on the ring.
void Soc::build_aicores(const cfg::Node& plat) {
  if (const cfg::Node* ac = plat.find("aicore")) {
    has_aicore_ = true;
    aicore_cfg_ = aicore::AiCoreConfig::from(*ac);
    aicore_cfg_.l2_bytes = l2_cfg_.size_bytes;
    for (std::uint64_t st : aicore_cfg_.stops)
      if (st >= ring_cfg_.stops) ac->at("stops").fail("stop " + std::to_string(st) + " does not exist");
    aicore_level_ = std::make_unique<Level>("aicore", [&] {
      for (std::uint32_t i = 0; i < aicore_cfg_.cores; ++i) {
        std::uint32_t stop = aicore_cfg_.stops.empty() ? spread(i, aicore_cfg_.cores, ring_cfg_.stops)
                                                       : std::uint32_t(aicore_cfg_.stops[i % aicore_cfg_.stops.size()]);
        auto core = std::make_unique<aicore::AiCore>(("core" + std::to_string(i)).c_str(), aicore_cfg_, i,
                                                     l2_cfg_.line_bytes, !timing_only_);
        unsigned src = ring_->connect_initiator(core->bus, stop, core->name());
        src_is_hn_.resize(src + 1, false);
        placement_.push_back({core->name(), stop, "requester (AI Core)"});
        cores_.push_back(std::move(core));
      }
    });
  }
}

// The media jobs as the kernel launcher sees them (none without dvpp: jobs).
KernelLauncher::MediaJobs Soc::media_jobs() const {
  KernelLauncher::MediaJobs media;
  if (!media_) return media;
  const MediaLauncher* m = media_.get();
  media.task = [m](const std::string& job, dvp_task& t) { return m->task_of(job, t); };
  media.output = [m](const std::string& job, KernelLauncher::MediaBuffer& b) {
    MediaLauncher::Output o;
    if (!m->output_of(job, o)) return false;
    const dvpp::Picture& p = *o.picture;
    b = {o.offset, o.bytes, std::uint32_t(p.format), p.width, p.height, p.stride_w, p.stride_h};
    return true;
  };
  media.completed = [m](const std::string& job) { return m->completed(job); };
  media.done = [m] { return m->done(); };
  media.finished = &m->finished();
  media.floor = m->floor();
  return media;
}

// The bare-mode launcher (or, with firmware, the loader of the job table: also for a scenario
// whose tasks are media tasks only).
void Soc::build_launcher(const Scenario& s) {
  static const cfg::Node kNone;
  const cfg::Node* kernels = s.root.find("kernels");
  const cfg::Node* tasks = s.root.find("tasks");
  const bool has_kernels = kernels && kernels->is_seq() && !kernels->items().empty();
  if (!has_kernels && !(tasks && media_)) return;
  if (has_kernels && !has_aicore_)
    kernels->fail("the scenario runs kernels but the platform has no platform.aicore section");
  if (tasks && !s.root.find("firmware"))
    tasks->fail("tasks are submitted by firmware: add a firmware: section (e.g. image: runtime)");
  std::vector<aicore::AiCore*> cores;
  for (auto& c : cores_) cores.push_back(c.get());
  launcher_ = std::make_unique<KernelLauncher>("launcher", has_kernels ? *kernels : kNone, s.dir, cores, aicore_cfg_,
                                               *storage_, dram_base_, !timing_only_, tasks, media_jobs());
  launcher_->set_dram_peak(dram_cfg_.peak_bytes_per_ps());
  launcher_->set_invalidate([this](const KernelLauncher::AddressRanges& r) {
    for (auto& slice : l2_) slice->invalidate(r);
  });
  launcher_->set_bulk_read(
      [this](std::uint64_t addr, std::uint8_t* out, std::uint64_t len) { return bulk_read(addr, out, len); });
  unsigned src = ring_->connect_initiator(launcher_->socket, 0, launcher_->name());
  src_is_hn_.resize(src + 1, false);
}

// Where a traffic generator's region is, and so the largest piece it sends: an L2 line in DRAM, a
// 4 KiB page in an RTL block's region (the AXI bursts' limit); a config error anywhere else.
std::uint32_t Soc::requester_split(const tgen::TgenConfig& c, const cfg::Node& t, std::uint32_t i) const {
  if (c.pattern == tgen::Pattern::Trace) return l2_cfg_.line_bytes;
  // A region past the top of the address space (its end would wrap to a small address) is nowhere.
  const bool wraps = c.region_bytes > ~std::uint64_t(0) - c.region_base;
  const std::uint64_t end = c.region_base + c.region_bytes;
  for (const RtlRoute& r : rtl_routes_)
    if (!wraps && c.region_base >= r.base && end <= r.base + r.size) return 4096;
  if (!wraps && c.region_base >= dram_base_ && end <= dram_base_ + dram_cfg_.geo.capacity()) return l2_cfg_.line_bytes;
  t.at(t.has("region_base") ? "region_base" : "region_bytes")
      .fail("instance " + std::to_string(i) + " region " + hex(c.region_base) + " - " +
            (wraps ? std::string("past 2^64") : hex(end - 1)) + " is neither within DRAM (" + hex(dram_base_) + " - " +
            hex(dram_base_ + dram_cfg_.geo.capacity() - 1) + ") nor within an RTL block's target region");
}

// Traffic generators: requesters on the ring.
void Soc::build_requesters(const Scenario& s) {
  const cfg::Node* traffic = s.root.find("traffic");
  std::uint32_t total = 0;
  if (traffic && traffic->is_seq())
    for (auto& t : traffic->items()) total += std::uint32_t(t.get_uint("instances"));
  std::uint32_t k = 0;
  std::set<std::string> names;
  req_level_ = std::make_unique<Level>("requesters", [&] {
    if (!traffic || !traffic->is_seq()) return;
    for (auto& t : traffic->items()) {
      const tgen::TgenGroup group = tgen::TgenGroup::from(t, s.dir);
      const tgen::TgenConfig& base = group.base;
      const std::uint32_t n = group.instances;
      const std::vector<std::uint64_t>& stops = group.stops;
      for (std::uint64_t st : stops)
        if (st >= ring_cfg_.stops) t.at("stops").fail("stop " + std::to_string(st) + " does not exist");
      for (std::uint32_t i = 0; i < n; ++i, ++k) {
        tgen::TgenConfig c = base;
        c.seed = base.seed + i;
        std::uint64_t step = 0;
        if (__builtin_mul_overflow(group.instance_stride, std::uint64_t(i), &step) ||
            __builtin_add_overflow(group.region_base.value_or(dram_base_ + group.region_offset), step, &c.region_base))
          t.fail("instance " + std::to_string(i) + "'s region starts past the end of the address space");
        const std::uint32_t split = requester_split(c, t, i);
        std::uint32_t stop = stops.empty() ? spread(k, total, ring_cfg_.stops) : std::uint32_t(stops[i % stops.size()]);
        std::string nm = base.name + std::to_string(i);
        // Two entries' instances must not share a name (rd + 10 and rd1 + 0 would): it names their
        // statistics, their trace lane and their errors.
        if (!names.insert(nm).second)
          t.at("name").fail("requester '" + nm +
                            "' is already another traffic entry's instance: give each entry its own name");
        c.name = nm;
        auto g = std::make_unique<tgen::TrafficGenerator>(nm.c_str(), c, split, timing_only_);
        unsigned src = ring_->connect_initiator(g->socket, stop, g->name());
        src_is_hn_.resize(src + 1, false);
        placement_.push_back({g->name(), stop, "requester"});
        gens_.push_back(std::move(g));
      }
    }
  });
}

// DVPP: a requester on the ring, and the launcher of the scenario's dvpp: entries (bare mode, or
// with firmware the commands its tasks submit). Built before the kernel launcher, which writes
// the job table those tasks are in; wired to the peripherals once they exist (wire_dvpp).
void Soc::build_dvpp(const cfg::Node& d, const Scenario& s) {
  const dvpp::DvppConfig cfg = dvpp::DvppConfig::from(d);
  if (cfg.stop >= ring_cfg_.stops) d.at("stop").fail("stop " + std::to_string(cfg.stop) + " does not exist");
  const cfg::Node* cpu = s.root.at("platform").find("cpu");
  dvpp::Dvpp::Wiring w;
  w.line_bytes = l2_cfg_.line_bytes, w.functional = !timing_only_;
  w.access_ns = cpu ? cpu->get_double("mmio_access_ns") : 0;
  dvpp_ = std::make_unique<dvpp::Dvpp>("dvpp", cfg, w);
  ring_->connect_initiator(dvpp_->mem, cfg.stop, dvpp_->name());
  src_is_hn_.resize(ring_->sources(), false);
  placement_.push_back({dvpp_->name(), cfg.stop, "requester (DVPP)"});
  const cfg::Node* jobs = s.root.find("dvpp");
  if (!jobs || !jobs->is_seq() || jobs->items().empty()) return;
  const bool firmware = s.root.find("firmware") != nullptr;
  media_ = std::make_unique<MediaLauncher>("media", *jobs, s.dir, *dvpp_, *storage_, dram_base_,
                                           cpu ? cpu->get_uint("mmio_base") + kDvppOffset : 0, !timing_only_, firmware);
  ring_->connect_initiator(media_->socket, cfg.stop, media_->name());
  src_is_hn_.resize(ring_->sources(), false);
}

// DVPP's registers on the peripherals' bus (with CPUs) at kDvppOffset, its interrupt on line
// kDvppIrqLine, the task scheduler's way to it; the bare-mode launcher reaches the registers
// through that bus, or straight when there is none.
void Soc::wire_dvpp(const cfg::Node& plat) {
  if (irq_) {
    if (kAicpuFirstLine + cpu_cfg_.aicpu_cores > kDvppIrqLine)
      plat.at("dvpp").fail("DVPP's interrupt line " + std::to_string(kDvppIrqLine) + " is an AI CPU mailbox's with " +
                           std::to_string(cpu_cfg_.aicpu_cores) + " AI CPU cores");
    dvpp_->connect_irq(irq_.get(), kDvppIrqLine);
  }
  if (mmio_bus_) mmio_bus_->attach(*dvpp_, cpu_cfg_.mmio_base + kDvppOffset);
  if (ts_) ts_->attach_dvpp(cpu_cfg_.mmio_base + kDvppOffset, dvpp_->completion());
  if (!media_) return;
  if (mmio_bus_)
    mmio_bus_->connect_cpu(media_->regs, media_->name());
  else
    media_->regs.bind(dvpp_->bus);
}

void Soc::build_cpus(const cfg::Node& c, const cfg::Node* fw, const Scenario& s) {
  cpu_cfg_ = cpu::CpuConfig::from(c);
  if (cpu_cfg_.stop >= ring_cfg_.stops)
    c.at("stop").fail("stop " + std::to_string(cpu_cfg_.stop) + " does not exist (the ring has " +
                      std::to_string(ring_cfg_.stops) + " stops)");
  if (cpu_cfg_.mmio_base + 0x10000 > dram_base_)
    c.at("mmio_base").fail("the peripherals' window (64 KiB) must end below DRAM (" + hex(dram_base_) + ")");
  periph_level_ = std::make_unique<Level>("periph", [&] { build_peripherals(c, s); });
  cpu_level_ = std::make_unique<Level>("cpu", [&] { build_arm_cores(); });
  if (launcher_ && launcher_->firmware_mode()) launcher_->set_control_cores(cpu_cfg_.control_cores);
  if (fw) load_firmware(*fw, s);
}

// The peripherals' bus and its devices: interrupt controller, timer, sim control, the task
// scheduler with each AI Core's control block (when there are AI Cores), a UART per core.
void Soc::build_peripherals(const cfg::Node& c, const Scenario& s) {
  const unsigned n = cpu_cfg_.cores();
  const double acc = cpu_cfg_.mmio_access_ns;
  mmio_bus_ = std::make_unique<mmio::MmioBus>("bus");
  mmio_bus_->set_tlm_checks(tlm_checks_);
  irq_ = std::make_unique<irq::IrqController>("irq", n, acc);
  timer_ = std::make_unique<timer::Timer>("timer", cpu_cfg_.counter, n, *irq_, kTimerFirstLine, acc);
  simctrl_ = std::make_unique<simctrl::SimCtrl>("simctrl", acc);
  mmio_bus_->attach(*irq_, cpu_cfg_.mmio_base + kIrqOffset);
  mmio_bus_->attach(*timer_, cpu_cfg_.mmio_base + kTimerOffset);
  mmio_bus_->attach(*simctrl_, cpu_cfg_.mmio_base + kSimctrlOffset);
  if (has_aicore_) {
    const cfg::Node* tsn = s.root.at("platform").find("ts");
    if (!tsn) c.fail("a platform with CPUs and AI Cores needs a platform.ts section (the task scheduler)");
    build_task_scheduler(c, *tsn);
  }
  for (unsigned i = 0; i < n; ++i) {
    uarts_.push_back(
        std::make_unique<uart::Uart>(("uart" + std::to_string(i)).c_str(), "cpu" + std::to_string(i), acc));
    mmio_bus_->attach(*uarts_.back(), cpu_cfg_.mmio_base + kUartOffset + kUartStride * i);
  }
}

void Soc::build_task_scheduler(const cfg::Node& c, const cfg::Node& tsn) {
  const double acc = cpu_cfg_.mmio_access_ns;
  std::vector<aicore::AiCore*> cores;
  for (auto& core : cores_) cores.push_back(core.get());
  ts::TaskScheduler::Wiring w;
  w.cores = cores;
  w.dvpp_rings = dram_base_ + DVP_TS_DVPP_RINGS_OFFSET;
  w.line_bytes = l2_cfg_.line_bytes;
  w.irq = irq_.get();
  w.irq_line = kTsIrqLine;
  w.aicpus = cpu_cfg_.aicpu_cores;
  w.aicpu_line = kAicpuFirstLine;
  w.ctrl_base = cpu_cfg_.mmio_base + kAicoreCtrlOffset;
  w.ctrl_stride = kAicoreCtrlStride;
  w.access_ns = acc;
  w.timing_only = timing_only_;
  ts_ = std::make_unique<ts::TaskScheduler>("ts", ts::TsConfig::from(tsn), std::move(w));
  mmio_bus_->attach(*ts_, cpu_cfg_.mmio_base + kTsOffset);
  // Each AI Core's control registers, where the scheduler (and the cores) reach them.
  if (cores.size() * kAicoreCtrlStride > 0x8000)
    c.fail("the peripherals' window has room for the control blocks of 128 AI Cores");
  for (std::size_t i = 0; i < cores.size(); ++i) {
    aicore_ctrl_.push_back(
        std::make_unique<aicore::AiCoreCtrl>(("aicore" + std::to_string(i)).c_str(), *cores[i], acc));
    mmio_bus_->attach(*aicore_ctrl_.back(), cpu_cfg_.mmio_base + kAicoreCtrlOffset + kAicoreCtrlStride * i);
  }
  mmio_bus_->connect_cpu(ts_->ctrl, ts_->name());
  // Its queues through the ring from the CPU cluster's stop: the scheduler is a dedicated CPU
  // (seeds, the Ascend SoC: "专用CPU作为任务调度器"); where it sits is an assumption.
  ring_->connect_initiator(ts_->mem, cpu_cfg_.stop, ts_->name());
  src_is_hn_.resize(ring_->sources(), false);
  placement_.push_back({ts_->name(), cpu_cfg_.stop, "requester (task scheduler's queues)"});
  if (ts::Sdma* d = ts_->sdma()) {  // beside the scheduler that feeds it (an assumption, as its place)
    ring_->connect_initiator(d->mem, cpu_cfg_.stop, d->name());
    src_is_hn_.resize(ring_->sources(), false);
    placement_.push_back({d->name(), cpu_cfg_.stop, "requester (SDMA: preloads into the L2)"});
  }
}

// The Arm cores map DRAM by the pointer a DRAM controller grants through TLM DMI (the ring
// grants none, nor does an RTL bridge): their loads and stores are values in memory, timed by
// their L1 models, and with firmware the L2 keeps tags only so nothing is held past the pointer.
// A core asks for it when the firmware starts it (during the platform's construction): from then
// on every page of DRAM counts as written (dram/storage.hpp), which a platform with Arm cores and
// no firmware does not pay for.
void Soc::build_arm_cores() {
  const std::uint64_t dram_bytes = storage_->size();
  const auto map_dram = [this]() -> std::uint8_t* {
    tlm::tlm_generic_payload req;
    req.set_address(dram_base_);
    tlm::tlm_dmi dmi;
    if (!mcs_.front()->get_direct_mem_ptr(req, dmi) || dmi.get_start_address() != dram_base_ ||
        dmi.get_end_address() - dram_base_ + 1 != storage_->size())
      throw Error("soc: the DRAM controller granted no direct pointer to all of DRAM at " + hex(dram_base_));
    return dmi.get_dmi_ptr();
  };
  for (unsigned i = 0; i < cpu_cfg_.cores(); ++i) {
    const std::string role =
        i < cpu_cfg_.control_cores ? "ctrl" + std::to_string(i) : "aicpu" + std::to_string(i - cpu_cfg_.control_cores);
    cpus_.push_back(std::make_unique<cpu::ArmCpu>(role.c_str(), cpu_cfg_, i, map_dram, dram_base_, dram_bytes, *irq_));
    cpu::ArmCpu& core = *cpus_.back();
    mmio_bus_->connect_cpu(core.mmio, core.name());
    ring_->connect_initiator(core.bus, cpu_cfg_.stop, core.name());
    src_is_hn_.resize(ring_->sources(), false);
    placement_.push_back({core.name(), cpu_cfg_.stop, "requester (Arm core's L1 caches)"});
    core.set_mmio_namer([this](std::uint64_t a) { return mmio_bus_->describe(a); });
    core.set_fault_handler([this](const cpu::CpuFault& f) {
      if (cpu_fault_.empty()) cpu_fault_ = f.str();
      sc_core::sc_stop();
    });
  }
}

// A raw image goes into DRAM as it is, and the listed cores start at its first byte; an ELF
// executable (the SDK's link gives both) is placed by its program headers and started at its
// entry point. A name (no '/') is a firmware this project builds; a path is used as it is when
// absolute, else relative to the scenario file, as kernel sources are.
void Soc::load_firmware(const cfg::Node& fw, const Scenario& s) {
  const unsigned n = cpu_cfg_.cores();
  const std::string img = fw.get_string("image");
  const bool named = img.find('/') == std::string::npos;
  const std::string path = named                                      ? firmware_dir() + "/" + img + ".bin"
                           : std::filesystem::path(img).is_absolute() ? img
                                                                      : s.dir + "/" + img;
  const std::vector<char> bytes = read_image(fw, path, named);
  if (bytes.empty()) fw.at("image").fail(path + " is empty");
  const bool elf = bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0;
  const std::uint64_t load = elf ? place_elf(fw, bytes, path) : place_raw(fw, bytes);
  std::vector<std::uint64_t> start = {0};
  if (fw.has("cores")) start = fw.get_uint_list("cores");
  if (start.empty()) fw.at("cores").fail("lists no core: nothing would run the firmware (the default is [0])");
  bool aicpu_started = false;
  for (std::size_t k = 0; k < start.size(); ++k) {
    const std::uint64_t i = start[k];
    if (i >= n) fw.at("cores").fail("core " + std::to_string(i) + " does not exist (" + std::to_string(n) + " cores)");
    if (std::count(start.begin(), start.begin() + std::ptrdiff_t(k), i))
      fw.at("cores").items()[k].fail("core " + std::to_string(i) + " is listed twice");
    cpus_[i]->start(load);
    aicpu_started |= i >= cpu_cfg_.control_cores;
  }
  if (launcher_ && launcher_->has_aicpu_tasks() && !aicpu_started)
    fw.fail("the tasks include AI CPU kernels, but firmware.cores starts no AI CPU core (cores " +
            std::to_string(cpu_cfg_.control_cores) + ".." + std::to_string(n - 1) + " are AI CPUs)");
}

std::uint64_t Soc::place_raw(const cfg::Node& fw, const std::vector<char>& bytes) {
  const std::uint64_t load = fw.has("load") ? fw.get_uint("load") : dram_base_;
  if (load < dram_base_ || load - dram_base_ + bytes.size() > storage_->size())
    fw.at("load").fail("the image (" + std::to_string(bytes.size()) + " bytes at " + hex(load) + ") must lie in DRAM");
  if (load % 4)
    fw.at("load").fail(hex(load) + " is not 4-byte aligned: the cores start there, and an A64 instruction is 4 bytes");
  std::memcpy(storage_->write_at(load - dram_base_, bytes.size()), bytes.data(), bytes.size());
  return load;
}

// One PT_LOAD segment: its file bytes at its physical address, the rest of its memory (.bss) zero.
static void place_segment(dram::Storage& storage, std::uint64_t dram_base, const cfg::Node& at, const Elf64_Phdr& ph,
                          const std::vector<char>& bytes, const std::string& seg, std::vector<Elf64_Phdr>& placed) {
  const std::uint64_t dram = storage.size();
  if (ph.p_filesz > ph.p_memsz || ph.p_offset > bytes.size() || ph.p_filesz > bytes.size() - ph.p_offset)
    at.fail(seg + "'s bytes lie past the end of the file");
  if (ph.p_paddr < dram_base || ph.p_paddr - dram_base > dram || ph.p_memsz > dram - (ph.p_paddr - dram_base))
    at.fail(seg + " at " + hex(ph.p_paddr) + " (" + std::to_string(ph.p_memsz) + " bytes) does not lie in DRAM (" +
            hex(dram_base) + " - " + hex(dram_base + dram - 1) + ")");
  for (const Elf64_Phdr& o : placed)
    if (ph.p_paddr < o.p_paddr + o.p_memsz && o.p_paddr < ph.p_paddr + ph.p_memsz)
      at.fail(seg + " at " + hex(ph.p_paddr) + " overlaps an earlier segment at " + hex(o.p_paddr));
  std::uint8_t* to = storage.write_at(ph.p_paddr - dram_base, ph.p_memsz);
  std::memcpy(to, bytes.data() + ph.p_offset, ph.p_filesz);
  std::memset(to + ph.p_filesz, 0, ph.p_memsz - ph.p_filesz);
  placed.push_back(ph);
}

// Its PT_LOAD segments placed; returns where the cores start.
std::uint64_t Soc::place_elf(const cfg::Node& fw, const std::vector<char>& bytes, const std::string& path) {
  const cfg::Node& at = fw.at("image");
  Elf64_Ehdr eh{};
  if (bytes.size() < sizeof eh) at.fail(path + ": an ELF file cut short in its header");
  std::memcpy(&eh, bytes.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_AARCH64)
    at.fail(path + ": an ELF file, but not a 64-bit little-endian AArch64 one");
  if (eh.e_type != ET_EXEC)
    at.fail(path + ": an ELF file, but not an executable (an object or a shared library has no load addresses)");
  if (fw.has("load")) fw.at("load").fail("an ELF image is placed by its program headers: drop firmware.load");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > bytes.size() ||
      eh.e_phnum > (bytes.size() - eh.e_phoff) / sizeof(Elf64_Phdr))
    at.fail(path + ": its program headers lie past the end of the file");
  std::vector<Elf64_Phdr> segs;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    std::memcpy(&ph, bytes.data() + eh.e_phoff + i * sizeof ph, sizeof ph);
    if (ph.p_type == PT_LOAD && ph.p_memsz)
      place_segment(*storage_, dram_base_, at, ph, bytes, path + ": segment " + std::to_string(i), segs);
  }
  if (segs.empty()) at.fail(path + ": an ELF executable with no segment to load");
  // The entry point is a virtual address: the cores start at the physical one of its segment.
  for (const Elf64_Phdr& ph : segs)
    if (eh.e_entry - ph.p_vaddr < ph.p_memsz) {
      const std::uint64_t start = ph.p_paddr + (eh.e_entry - ph.p_vaddr);
      if (start % 4) at.fail(path + ": its entry point " + hex(eh.e_entry) + " is not 4-byte aligned");
      return start;
    }
  at.fail(path + ": its entry point " + hex(eh.e_entry) + " lies in no segment it loads");
}

// A regular file no larger than DRAM: a device or a directory is named, not read forever.
std::vector<char> Soc::read_image(const cfg::Node& fw, const std::string& path, bool named) const {
  const std::string img = fw.get_string("image");
  std::error_code ec;  // a name the file system refuses is "cannot open" below, not a throw
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    fw.at("image").fail(path + " is not a regular file");
  if (std::filesystem::exists(path, ec) && std::filesystem::file_size(path, ec) > storage_->size())
    fw.at("image").fail(path + " is larger than DRAM (" + std::to_string(storage_->size()) + " B)");
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  const int why = errno;
  const std::string hint =
      " (a firmware the project builds, in build/firmware or $DVP_FIRMWARE: run scripts/build.sh; "
      "an image of your own is a path, like ./" +
      img + ".bin or /abs/path/" + img + ".bin)";
  if (!f)
    fw.at("image").fail("cannot open " + path + ": " + (why ? std::strerror(why) : "open failed") +
                        (named ? hint : ""));
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// What a debug read through the ring answers for [addr, addr + len), in bulk: DRAM's bytes with
// the L2 slices' lines over them (route() sends a DRAM address to its slice, which answers from
// its line or from memory). Only all of it in DRAM and none in an RTL block's region (route()'s
// first choice).
bool Soc::bulk_read(std::uint64_t addr, std::uint8_t* out, std::uint64_t len) const {
  if (addr < dram_base_ || addr - dram_base_ > storage_->size() || len > storage_->size() - (addr - dram_base_))
    return false;
  for (const RtlRoute& r : rtl_routes_)
    if (addr < r.base + r.size && r.base < addr + len) return false;
  storage_->read(addr - dram_base_, out, len);  // pages never written as zeros, untouched
  if (l2_.empty() || len == 0) return true;
  // Each line to its slice, as route() sends it: one hash a line, not every slice looking at all.
  const unsigned bits = hash_.line_bits();
  for (std::uint64_t line = addr >> bits; line <= (addr + len - 1) >> bits; ++line) {
    const std::uint64_t lo = std::max(addr, line << bits), hi = std::min(addr + len, (line + 1) << bits);
    l2_[hash_.slice(lo)]->overlay(lo, hi, out + (lo - addr));
  }
  return true;
}

int Soc::route(std::uint64_t addr, unsigned src) const {
  for (const RtlRoute& r : rtl_routes_)
    if (addr - r.base < r.size) return r.dst;
  if (addr >= dram_base_ && addr - dram_base_ < storage_->size()) {
    if (src_is_hn_[src]) {
      std::uint32_t ch = mapper_->channel(addr - dram_base_);
      return mn_dst_[ch / dram_cfg_.channels_per_controller];
    }
    return hn_dst_[hash_.slice(addr)];
  }
  return -1;
}

std::vector<AddressRegion> Soc::address_map() const {
  std::vector<AddressRegion> m;
  m.push_back({"dram", dram_base_, dram_cfg_.geo.capacity(),
               std::to_string(l2_cfg_.slices) + " L2 slices (hash of the line address) -> " +
                   std::to_string(dram_cfg_.controllers) + " " + dram_cfg_.type + " controllers x " +
                   std::to_string(dram_cfg_.channels_per_controller) + " channels",
               true});
  for (const rtl::RtlBlock* b : all_rtl()) {
    const rtl::RtlConfig& c = b->config();
    if (c.has_target)
      m.push_back({"rtl " + c.name, c.target_base, c.target_size,
                   std::string(b->model().top()) + " (RTL, " + c.plugin + ") at ring stop " + std::to_string(c.stop) +
                       (mmio_bus_ ? " and on the CPUs' MMIO bus" : ""),
                   true});
  }
  return m;
}

// RTL blocks (platform.rtl): each a plug-in behind its bridges. A target is a ring destination
// for its region, and with CPUs a device on their MMIO bus; an initiator is a ring requester; an
// interrupt output drives a free line of the controller.
void Soc::build_rtl(const cfg::Node& list, const Scenario& s) {
  rtl_level_ = std::make_unique<Level>("rtl", [&] {
    for (const cfg::Node& n : list.items()) {
      const rtl::RtlConfig c = rtl::RtlConfig::from(n, s.dir, rtl_dir());
      for (const auto& b : rtl_)
        if (b->config().name == c.name) n.at("name").fail("another RTL block is named " + c.name);
      rtl_.push_back(make_rtl(c, n, c.has_target ? n.at("target").at("base") : n));
    }
  });
}

std::unique_ptr<rtl::RtlBlock> Soc::make_rtl(const rtl::RtlConfig& c, const cfg::Node& n, const cfg::Node& base_key) {
  if (c.stop >= ring_cfg_.stops) n.at("stop").fail("stop " + std::to_string(c.stop) + " does not exist");
  std::unique_ptr<rtl::RtlBlock> b;
  try {
    b = std::make_unique<rtl::RtlBlock>(c.name.c_str(), c, l2_cfg_.line_bytes);
  } catch (const Error& e) {
    n.fail(e.what());  // the plug-in, its ports: named with the scenario's line
  }
  if (c.has_target) place_rtl_target(*b, base_key);
  if (c.has_initiator) {
    ring_->connect_initiator(b->mem, c.stop, b->name());
    src_is_hn_.resize(ring_->sources(), false);
    placement_.push_back({b->name(), c.stop, "requester (RTL)"});
  }
  if (c.irq) {
    claim_irq_line(*c.irq, n.at("irq"));
    b->connect_irq(irq_.get(), *c.irq);
  }
  return b;
}

// An interrupt line for a block: one the controller has and no other device drives.
void Soc::claim_irq_line(unsigned line, const cfg::Node& key) {
  if (!irq_) key.fail("an interrupt needs the CPU subsystem (platform.cpu)");
  if (irq_lines_taken_.empty()) {
    irq_lines_taken_ = {kTsIrqLine, kDvppIrqLine, kTimerFirstLine, kTimerFirstLine + 1};
    for (unsigned a = 0; a < cpu_cfg_.aicpu_cores; ++a) irq_lines_taken_.push_back(kAicpuFirstLine + a);
  }
  if (line >= irq::IrqController::kLines)
    key.fail("the interrupt controller has lines 0 to " + std::to_string(irq::IrqController::kLines - 1));
  if (std::find(irq_lines_taken_.begin(), irq_lines_taken_.end(), line) != irq_lines_taken_.end())
    key.fail("line " + std::to_string(line) + " is taken (docs/peripherals.md lists the lines in use)");
  irq_lines_taken_.push_back(line);
}

// A device region the CPUs must reach: within their MMIO window, between mmio_base and DRAM.
void Soc::check_in_mmio_window(std::uint64_t base, std::uint64_t size, const cfg::Node& key) const {
  if (base < cpu_cfg_.mmio_base || base + size > dram_base_)
    key.fail("the CPUs reach devices between mmio_base (" + hex(cpu_cfg_.mmio_base) + ") and DRAM (" + hex(dram_base_) +
             "): put the region there");
}

void Soc::place_rtl_target(rtl::RtlBlock& b, const cfg::Node& base_key) {
  const rtl::RtlConfig& c = b.config();
  const std::uint64_t end = c.target_base + c.target_size;
  if (c.target_base < dram_base_ + storage_->size() && dram_base_ < end)
    base_key.fail("the region " + hex(c.target_base) + " - " + hex(end - 1) + " overlaps DRAM");
  for (const RtlRoute& r : rtl_routes_)
    if (c.target_base < r.base + r.size && r.base < end) base_key.fail("the region overlaps another RTL block's");
  if (mmio_bus_) {
    check_in_mmio_window(c.target_base, c.target_size, base_key);
    try {
      mmio_bus_->attach(b.target, b.basename(), "rtl (" + std::string(b.model().top()) + ")", c.target_base,
                        c.target_size, cpu_cfg_.mmio_access_ns);
    } catch (const Error& e) {
      base_key.fail(e.what());
    }
    b.note_binding(false);
  }
  rtl_routes_.push_back({c.target_base, c.target_size, int(ring_->connect_target(b.target, c.stop, b.name()))});
  b.note_binding(true);
  placement_.push_back({b.name(), c.stop, "RTL target " + hex(c.target_base)});
}

// The worked example (platform.vecacc): its TLM model on the MMIO bus and the ring, or its Verilog
// behind the bridges in the same places; the firmware cannot tell which.
void Soc::build_vecacc(const cfg::Node& n) {
  const vecacc::VecaccConfig c = vecacc::VecaccConfig::from(n);
  if (!mmio_bus_) n.fail("vecacc is driven by firmware: it needs platform.cpu");
  if (c.stop >= ring_cfg_.stops) n.at("stop").fail("stop " + std::to_string(c.stop) + " does not exist");
  if (c.rtl) {
    rtl::RtlConfig r;
    r.name = "vecacc", r.plugin = rtl::RtlConfig::plugin_path(c.plugin, "", rtl_dir()), r.clock = c.clock;
    r.stop = c.stop, r.waves = c.waves, r.irq = c.irq;
    r.has_target = true, r.target_base = c.base, r.target_size = VECACC_SIZE, r.target.prefix = "s_axi_";
    r.has_initiator = true, r.initiator.prefix = "m_axi_";
    vecacc_rtl_ = make_rtl(r, n, n.at("base"));
    if (vecacc_rtl_->initiator_data_bytes() != c.bus_bytes)
      n.at("data_bits")
          .fail("the plug-in " + r.plugin + " has a " + std::to_string(vecacc_rtl_->initiator_data_bytes() * 8) +
                "-bit bus: build it with -G DATA_W=" + std::to_string(c.bus_bytes * 8));
    return;
  }
  // A register access: the CPUs' path to the peripherals, then vecacc.v's AXI4-Lite handshake (the
  // access waits for its clock's edge, the response comes an edge later).
  const double access_ns = cpu_cfg_.mmio_access_ns + 2e-3 * double(c.clock.period());
  vecacc_ = std::make_unique<vecacc::Vecacc>("vecacc", c, l2_cfg_.line_bytes, access_ns);
  try {
    mmio_bus_->attach(*vecacc_, c.base);
  } catch (const Error& e) {
    n.at("base").fail(e.what());
  }
  check_in_mmio_window(c.base, VECACC_SIZE, n.at("base"));
  ring_->connect_initiator(vecacc_->mem, c.stop, vecacc_->name());
  src_is_hn_.resize(ring_->sources(), false);
  placement_.push_back({vecacc_->name(), c.stop, "requester (vecacc, TLM)"});
  claim_irq_line(c.irq, n.at("irq"));
  vecacc_->connect_irq(irq_.get(), c.irq);
}

}  // namespace dvp::platform
