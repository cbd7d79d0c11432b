// SPDX-License-Identifier: MIT
// Maps a byte offset into the DRAM space onto channel / rank / bank group / bank / row /
// column (burst index within the row), as configured by platform.dram.address_mapping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dram_config.hpp"

namespace dvp::dram {

struct DramAddress {
  std::uint32_t channel, rank, bank_group, bank, row, column;
};

class AddressMapper {
 public:
  // Throws ConfigError (naming the mapping key via `where`) on a bad mapping. `bank_xor`:
  // bank ^= the row folded to the bank width; `channel_xor`: channel ^= the address bits above
  // the channel field folded to its width (both keep the mapping one-to-one).
  AddressMapper(const Geometry& g, const std::vector<std::string>& mapping, const cfg::Node* where = nullptr,
                bool bank_xor = false, bool channel_xor = false);
  DramAddress decode(std::uint64_t offset) const;
  // decode(offset).channel alone (the ring routes every line fill to its channel's controller).
  std::uint32_t channel(std::uint64_t offset) const {
    std::uint32_t c = 0;
    for (const Slice& s : channel_slices_) c |= s.of(offset);
    return c ^ channel_hash(offset);
  }
  // The address of burst number `next` (offset >> burst_bits) given `a`, that of burst next - 1:
  // the bursts of one line usually differ only in the lowest slice of the mapping (a column
  // slice), which is then one add; else a full decode.
  DramAddress next_burst(const DramAddress& a, std::uint64_t next) const {
    if (step_field_ && (next & step_mask_) != 0) {
      DramAddress n = a;
      (n.*step_field_) += step_;
      return n;
    }
    return decode(next << burst_bits_);
  }
  // The burst number past the bursts from `burst` on that differ from it only in the lowest slice
  // of the mapping, when that is a column slice: they lie in its row (the channel and bank hashes
  // read no bits of that slice). burst + 1 when the lowest slice is no column slice.
  std::uint64_t column_run_end(std::uint64_t burst) const {
    return step_field_ == &DramAddress::column ? (burst | step_mask_) + 1 : burst + 1;
  }
  std::uint64_t encode(const DramAddress& a) const;  // start of that burst
  // log2 of the largest aligned block that always lies in one channel.
  unsigned channel_granule_bits() const { return channel_low_bit_; }
  unsigned burst_bits() const { return burst_bits_; }

 private:
  enum Field { kChannel, kRank, kBankGroup, kBank, kRow, kColumn, kFields };
  struct Slice {
    Field field;
    unsigned addr_shift, bits, field_shift;
    // This slice's bits of `offset`, at their place in the field.
    std::uint32_t of(std::uint64_t offset) const {
      return std::uint32_t((offset >> addr_shift) & ((1u << bits) - 1)) << field_shift;
    }
  };
  std::uint32_t bank_hash(std::uint32_t row) const;
  std::uint32_t channel_hash(std::uint64_t offset) const;
  std::vector<Slice> slices_;
  std::vector<Slice> channel_slices_;  // the channel's slices alone
  bool bank_xor_ = false, channel_xor_ = false;
  unsigned bank_bits_ = 0, channel_bits_ = 0;
  unsigned channel_high_bit_ = 0;  // the first address bit above every channel slice
  unsigned burst_bits_ = 0;
  unsigned channel_low_bit_ = 64;
  // next_burst's short way: the lowest slice's field, when it is neither hashed nor hashed on.
  std::uint32_t DramAddress::*step_field_ = nullptr;
  std::uint64_t step_mask_ = 0;  // the burst-number bits of the lowest slice
  std::uint32_t step_ = 0;       // one step of that slice within its field
};

}  // namespace dvp::dram
