// SPDX-License-Identifier: MIT
#include "dram_config.hpp"

namespace dvp::dram {

using cfg::Type;

namespace {
const cfg::Choices<Standard> kStandards = {
    {"lpddr4", Standard::Lpddr4, "LPDDR4 / LPDDR4X (JESD209-4): no bank groups"},
    {"hbm2", Standard::Hbm2, "HBM2 (JESD235): bank groups, pseudo-channels"},
};
const cfg::Choices<PagePolicy> kPagePolicies = {
    {"open", PagePolicy::Open, "rows stay open"},
    {"closed", PagePolicy::Closed, "auto-precharge after each request's last burst to a row"},
};
const cfg::Choices<bool> kBankHash = {
    {"none", false, "the mapping alone"},
    {"xor", true,
     "the bank index is XORed with the row folded to its width, so streams a large power of two apart fall in "
     "different banks"},
};
const cfg::Choices<bool> kChannelHash = {
    {"none", false, "the mapping alone"},
    {"xor", true,
     "the channel index is XORed with the address bits above the channel field folded to its width, so strided "
     "accesses (matrix rows a power of two apart) spread over every channel"},
};
}  // namespace

void Config::describe(cfg::Spec& s) {
  s.param("type", Type::Enum, "DRAM standard; selects the rules checked on the geometry: " + kStandards.doc())
      .choices(kStandards.names());
  s.param("controllers", Type::Int, "DRAM controllers (memory nodes on the ring)").range(1, 64);
  s.param("channels_per_controller", Type::Int, "channels each controller owns (HBM2: pseudo-channels)").range(1, 64);
  s.param("ranks", Type::Int, "ranks per channel").range(1, 4).power_of_two();
  s.param("bank_groups", Type::Int, "bank groups per rank (1 = none, as on LPDDR4)").range(1, 8).power_of_two();
  s.param("banks_per_group", Type::Int, "banks in each bank group").range(1, 32).power_of_two();
  s.param("rows", Type::Int, "rows per bank").range(256, 1 << 20).power_of_two();
  s.param("columns", Type::Int, "columns per row, each one bus width wide").range(16, 1 << 16).power_of_two();
  s.param("bus_width_bits", Type::Int, "data bus width of one channel").range(8, 512).power_of_two();
  s.param("burst_length", Type::Int, "beats per burst (BL)").range(2, 32).power_of_two();
  s.param("data_rate_mtps", Type::Int, "transfers per second per pin, in MT/s; tCK = 2000000/rate ps")
      .unit("MT/s")
      .range(100, 20000);
  s.param("frontend_cycles", Type::Int, "controller front-end latency added to every request")
      .unit("tCK")
      .range(0, 1000)
      .defaults("0");
  s.param("page_policy", Type::Enum, kPagePolicies.doc()).choices(kPagePolicies.names()).defaults("open");
  s.param("scheduler", Type::Enum, "order of column commands: " + schedulers().doc())
      .choices(schedulers().names())
      .defaults("frfcfs");
  s.param("refresh", Type::Enum, refresh_policies().doc()).choices(refresh_policies().names()).defaults("all_bank");
  s.param("bank_hash", Type::Enum, kBankHash.doc()).choices(kBankHash.names()).defaults("none");
  s.param("channel_hash", Type::Enum, kChannelHash.doc()).choices(kChannelHash.names()).defaults("none");
  s.param("write_queue", Type::Int,
          "write bursts a channel buffers (acknowledged after the front end) before draining them all, grouped "
          "by bank and row; 0: every write is scheduled when it arrives")
      .defaults("0")
      .range(0, 4096);
  s.param("address_mapping", Type::StringList,
          "address bits to DRAM fields, least significant first, after the burst offset; "
          "'field:n' takes n bits of that field, a bare 'field' the rest")
      .choices({"channel", "rank", "bank_group", "bank", "row", "column"});
  cfg::Spec& t = s.section("timing", "JEDEC timing parameters, in tCK of this DRAM");
  const char* names[][2] = {{"tRCD", "ACT to READ/WRITE"},
                            {"tRP", "PRE to ACT"},
                            {"tRAS", "ACT to PRE (ACT to ACT in one bank, tRC, is tRAS + tRP, as JEDEC defines it)"},
                            {"tRL", "READ to first data (CL)"},
                            {"tWL", "WRITE to first data"},
                            {"tCCD_S", "CAS to CAS, different bank group"},
                            {"tCCD_L", "CAS to CAS, same bank group"},
                            {"tRRD_S", "ACT to ACT, different bank group"},
                            {"tRRD_L", "ACT to ACT, same bank group"},
                            {"tFAW", "window holding at most four ACTs per rank"},
                            {"tWR", "end of write data to PRE"},
                            {"tWTR", "end of write data to READ"},
                            {"tRTP", "READ to PRE"},
                            {"tRFC", "refresh cycle time"},
                            {"tREFI", "average refresh interval"},
                            {"tRTW", "data-bus turnaround from read data to write data"}};
  for (auto& n : names) t.param(n[0], Type::Int, n[1]).unit("tCK").range(0, 1 << 20);
}

static std::uint32_t u32(const cfg::Node& n, const char* k) { return std::uint32_t(n.get_uint(k)); }

Config Config::from(const cfg::Node& n) {
  Config c;
  c.standard = kStandards.parse(n.at("type"));
  c.type = n.get_string("type");
  c.controllers = u32(n, "controllers");
  c.channels_per_controller = u32(n, "channels_per_controller");
  c.geo.channels = c.controllers * c.channels_per_controller;
  c.geo.ranks = u32(n, "ranks");
  c.geo.bank_groups = u32(n, "bank_groups");
  c.geo.banks_per_group = u32(n, "banks_per_group");
  c.geo.rows = u32(n, "rows");
  c.geo.columns = u32(n, "columns");
  c.geo.bus_width_bits = u32(n, "bus_width_bits");
  c.geo.burst_length = u32(n, "burst_length");
  c.data_rate_mtps = u32(n, "data_rate_mtps");
  c.clock = Clock(double(c.data_rate_mtps) / 2.0);
  c.frontend_cycles = u32(n, "frontend_cycles");
  c.page = kPagePolicies.parse(n.at("page_policy"));
  c.scheduler = schedulers().parse(n.at("scheduler"));
  c.refresh = refresh_policies().parse(n.at("refresh"));
  c.bank_xor = kBankHash.parse(n.at("bank_hash"));
  c.channel_xor = kChannelHash.parse(n.at("channel_hash"));
  c.write_queue = std::uint32_t(n.get_uint("write_queue"));
  c.mapping = n.get_string_list("address_mapping");

  const cfg::Node& t = n.at("timing");
  c.t = Timing{u32(t, "tRCD"),   u32(t, "tRP"),    u32(t, "tRAS"),   u32(t, "tRL"),  u32(t, "tWL"), u32(t, "tCCD_S"),
               u32(t, "tCCD_L"), u32(t, "tRRD_S"), u32(t, "tRRD_L"), u32(t, "tFAW"), u32(t, "tWR"), u32(t, "tWTR"),
               u32(t, "tRTP"),   u32(t, "tRFC"),   u32(t, "tREFI"),  u32(t, "tRTW")};

  // Cross-field rules, each naming the key at fault.
  if (c.geo.columns < c.geo.burst_length)
    n.at("columns").fail("a row must hold at least one burst (columns >= burst_length)");
  if ((c.geo.channels & (c.geo.channels - 1)) != 0)
    n.at("controllers").fail("controllers x channels_per_controller must be a power of two for the address mapping");
  if (c.standard == Standard::Lpddr4 && c.geo.bank_groups != 1)
    n.at("bank_groups").fail("LPDDR4 has no bank groups; set bank_groups: 1");
  if (c.t.tCCD_L < c.t.tCCD_S) t.at("tCCD_L").fail("tCCD_L must be at least tCCD_S");
  if (c.t.tCCD_S < c.geo.burst_length / 2)
    t.at("tCCD_S").fail("tCCD_S must be at least burst_length/2 = " + std::to_string(c.geo.burst_length / 2));
  if (c.t.tRRD_L < c.t.tRRD_S) t.at("tRRD_L").fail("tRRD_L must be at least tRRD_S");
  if (c.refresh(c)->enabled() && c.t.tREFI <= c.t.tRFC) t.at("tREFI").fail("tREFI must exceed tRFC");
  if (c.t.tRCD == 0 || c.t.tRP == 0 || c.t.tRL == 0) t.at("tRCD").fail("tRCD, tRP and tRL must be non-zero");
  return c;
}

}  // namespace dvp::dram
