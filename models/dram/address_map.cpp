// SPDX-License-Identifier: MIT
#include "address_map.hpp"

#include <algorithm>

namespace dvp::dram {

static unsigned log2u(std::uint64_t v) {
  unsigned b = 0;
  while ((std::uint64_t(1) << b) < v) ++b;
  return b;
}

// The XOR of all `width`-bit chunks of v, in log2(64 / width) steps: after the step with shift
// width * 2^k the low chunk holds the XOR of the first 2^(k+1) chunks. (Every burst decodes an
// address, so this is on the memory system's hot path.)
static std::uint64_t xor_fold(std::uint64_t v, unsigned width) {
  for (unsigned shift = width; shift < 64; shift *= 2) v ^= v >> shift;
  return v & ((std::uint64_t(1) << width) - 1);
}

AddressMapper::AddressMapper(const Geometry& g, const std::vector<std::string>& mapping, const cfg::Node* where,
                             bool bank_xor, bool channel_xor)
    : bank_xor_(bank_xor), channel_xor_(channel_xor) {
  auto fail = [&](const std::string& msg) {
    if (where) where->fail(msg);
    throw Error("dram address_mapping: " + msg);
  };
  const char* names[kFields] = {"channel", "rank", "bank_group", "bank", "row", "column"};
  unsigned need[kFields] = {log2u(g.channels),        log2u(g.ranks), log2u(g.bank_groups),
                            log2u(g.banks_per_group), log2u(g.rows),  log2u(g.bursts_per_row())};
  unsigned used[kFields] = {0, 0, 0, 0, 0, 0};
  bool seen[kFields] = {false, false, false, false, false, false};
  burst_bits_ = log2u(g.burst_bytes());
  unsigned shift = burst_bits_;
  for (const auto& entry : mapping) {
    auto colon = entry.find(':');
    std::string name = entry.substr(0, colon);
    int f = -1;
    for (int i = 0; i < kFields; ++i)
      if (name == names[i]) f = i;
    if (f < 0) fail("unknown field '" + name + "'");
    unsigned left = need[f] - used[f];
    unsigned bits = left;
    if (colon != std::string::npos) {
      try {
        bits = unsigned(std::stoul(entry.substr(colon + 1)));
      } catch (...) {
        fail("bad bit count in '" + entry + "'");
      }
      if (bits > left)
        fail("'" + entry + "' takes more bits than " + name + " has left (" + std::to_string(left) + ")");
    }
    seen[f] = true;
    if (bits == 0) continue;
    if (f == kChannel) {
      channel_low_bit_ = std::min(channel_low_bit_, shift);
      channel_high_bit_ = shift + bits;
    }
    slices_.push_back(Slice{Field(f), shift, bits, used[f]});
    if (f == kChannel) channel_slices_.push_back(slices_.back());
    used[f] += bits;
    shift += bits;
  }
  for (int i = 0; i < kFields; ++i) {
    if (!seen[i] && need[i] > 0) fail(std::string("field '") + names[i] + "' is missing");
    if (used[i] != need[i])
      fail(std::string("field '") + names[i] + "' gets " + std::to_string(used[i]) + " bits, needs " +
           std::to_string(need[i]));
  }
  if (channel_low_bit_ == 64) channel_low_bit_ = shift;  // one channel: granule is everything
  bank_bits_ = need[kBank];
  channel_bits_ = need[kChannel];
  // The channel and bank are hashed and the row feeds the bank's hash: only a column, rank or
  // bank-group slice right above the burst offset can be stepped by an add.
  if (!slices_.empty() && slices_[0].addr_shift == burst_bits_) {
    const Slice& low = slices_[0];
    std::uint32_t DramAddress::*fields[kFields] = {nullptr, &DramAddress::rank,  &DramAddress::bank_group, nullptr,
                                                   nullptr, &DramAddress::column};
    step_field_ = fields[low.field];
    step_mask_ = (std::uint64_t(1) << low.bits) - 1;
    step_ = 1u << low.field_shift;
  }
}

std::uint32_t AddressMapper::bank_hash(std::uint32_t row) const {
  // XOR-fold of the row to the bank width: rows a large power of two apart differ in some
  // group of bits, so their streams land in different banks.
  if (!bank_xor_ || bank_bits_ == 0) return 0;
  return std::uint32_t(xor_fold(row, bank_bits_));
}

std::uint32_t AddressMapper::channel_hash(std::uint64_t offset) const {
  // XOR-fold of everything above the channel field: accesses a power of two apart (rows of a
  // matrix, say) would otherwise queue at a few channels while the others idle.
  if (!channel_xor_ || channel_bits_ == 0 || channel_high_bit_ >= 64) return 0;
  return std::uint32_t(xor_fold(offset >> channel_high_bit_, channel_bits_));
}

DramAddress AddressMapper::decode(std::uint64_t offset) const {
  std::uint32_t v[kFields] = {0, 0, 0, 0, 0, 0};
  for (const Slice& s : slices_) v[s.field] |= s.of(offset);
  return DramAddress{v[kChannel] ^ channel_hash(offset), v[kRank], v[kBankGroup],
                     v[kBank] ^ bank_hash(v[kRow]),      v[kRow],  v[kColumn]};
}

std::uint64_t AddressMapper::encode(const DramAddress& a) const {
  // Every field but the channel first: the channel hash reads only bits above the channel.
  std::uint32_t v[kFields] = {0, a.rank, a.bank_group, a.bank ^ bank_hash(a.row), a.row, a.column};
  auto place = [&](std::uint64_t off, Field only) {
    for (const Slice& s : slices_)
      if ((s.field == kChannel) == (only == kChannel))
        off |= std::uint64_t((v[s.field] >> s.field_shift) & ((1u << s.bits) - 1)) << s.addr_shift;
    return off;
  };
  std::uint64_t off = place(0, kRow);
  v[kChannel] = a.channel ^ channel_hash(off);
  return place(off, kChannel);
}

}  // namespace dvp::dram
