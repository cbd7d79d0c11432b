// SPDX-License-Identifier: MIT
// Helpers on the TLM generic payload shared by all models.
#pragma once
#include <cstdint>

#include <tlm>

namespace dvp {

// Marks a transaction as timing-only: targets account its time and traffic but move no
// data (fast what-if sweeps). Ignorable: a target that does not know it just moves data.
// Instances belong to the module that attaches them (usually one static object), never to a
// payload: a payload's destructor calls free() on what is still attached, so free() must not
// delete.
struct TimingOnly : tlm::tlm_extension<TimingOnly> {
  tlm::tlm_extension_base* clone() const override { return new TimingOnly; }
  void copy_from(const tlm::tlm_extension_base&) override {}
  void free() override {}
};

inline bool is_timing_only(const tlm::tlm_generic_payload& p) { return p.get_extension<TimingOnly>() != nullptr; }

// Readies `p` for one plain access (no byte enables, one streaming beat, response pending).
inline void prepare(tlm::tlm_generic_payload& p, bool write, std::uint64_t addr, unsigned char* data, unsigned len) {
  p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
  p.set_address(addr);
  p.set_data_ptr(data);
  p.set_data_length(len);
  p.set_streaming_width(len);
  p.set_byte_enable_ptr(nullptr);
  p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

}  // namespace dvp
