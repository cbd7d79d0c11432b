// SPDX-License-Identifier: MIT
#include "mmio.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"

namespace dvp::mmio {

Register::Register(Device& dev, std::string name, std::uint32_t offset, std::uint32_t reset, std::string doc)
    : value(reset), name_(std::move(name)), offset_(offset), reset_(reset), doc_(std::move(doc)) {
  dev.regs_.push_back(this);
}

Device::Device(sc_core::sc_module_name name, std::uint32_t size, double access_ns)
    : sc_module(name), bus("bus"), size_(size), access_(access_ns, sc_core::SC_NS) {
  bus.register_b_transport(this, &Device::b_transport);
}

void Device::b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const std::uint64_t off = p.get_address();
  if (by_word_.empty()) {
    by_word_.assign((size_ + 3) / 4, nullptr);
    for (Register* x : regs_) by_word_[x->offset() / 4] = x;
  }
  Register* r = off % 4 == 0 && off / 4 < by_word_.size() ? by_word_[off / 4] : nullptr;
  // Registers are 32 bits wide and accessed whole.
  if (!r || p.get_data_length() != 4 || p.get_byte_enable_ptr()) {
    p.set_response_status(r ? tlm::TLM_BURST_ERROR_RESPONSE : tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  now_ = sc_core::sc_time_stamp() + delay;
  std::uint32_t v = 0;
  if (p.is_write()) {
    std::memcpy(&v, p.get_data_ptr(), 4);
    r->bad_write_ = false;
    if (r->write_)
      r->write_(v);
    else
      r->value = v;
    if (r->bad_write_) {
      p.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
  } else {
    v = r->read_ ? r->read_() : r->value;
    std::memcpy(p.get_data_ptr(), &v, 4);
  }
  delay += access_;
  p.set_response_status(tlm::TLM_OK_RESPONSE);
}

MmioBus::MmioBus(sc_core::sc_module_name name) : sc_module(name), cpus("cpus"), devices("devices") {
  cpus.register_b_transport(this, &MmioBus::b_transport);
}

void MmioBus::attach(Device& d, std::uint64_t base) {
  add_region(Region{base, d.size(), &d, d.basename(), d.device_kind(), sc_core::SC_ZERO_TIME});
  tlmcheck::bind_checked(devices, d.bus, tlm_checks_, std::string(name()) + " -> " + d.name(), checkers_);
}

void MmioBus::add_region(Region n) {
  for (const Region& r : regions_)
    if (n.base < r.base + r.size && r.base < n.base + n.size)
      throw Error(n.name + " at " + hex(n.base) + " overlaps " + r.name + " (" + hex(r.base) + " - " +
                  hex(r.base + r.size - 1) + ")");
  regions_.push_back(std::move(n));
  by_base_.push_back(regions_.size() - 1);
  std::sort(by_base_.begin(), by_base_.end(),
            [this](std::size_t a, std::size_t b) { return regions_[a].base < regions_[b].base; });
}

std::string MmioBus::describe(std::uint64_t addr) const {
  for (const Region& r : regions_)
    if (addr >= r.base && addr < r.base + r.size) {
      if (!r.dev) return r.name + " (offset " + hex(addr - r.base) + ")";
      std::string s = r.dev->basename();
      for (const Register* x : r.dev->registers())
        if (x->offset() == addr - r.base) return s + "." + x->name();
      return s + " (no register at offset " + std::to_string(addr - r.base) + ")";
    }
  return "";
}

void MmioBus::b_transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
  const std::uint64_t addr = p.get_address();
  // The last region starting at or below addr is the only one that can hold it (no overlaps).
  auto it = std::upper_bound(by_base_.begin(), by_base_.end(), addr,
                             [this](std::uint64_t a, std::size_t i) { return a < regions_[i].base; });
  if (it != by_base_.begin()) {
    const std::size_t i = *std::prev(it);
    const Region& r = regions_[i];
    if (addr < r.base + r.size) {
      p.set_address(addr - r.base);
      delay += r.path;
      devices[int(i)]->b_transport(p, delay);
      p.set_address(addr);
      return;
    }
  }
  p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

}  // namespace dvp::mmio
