// SPDX-License-Identifier: MIT
// Memory-mapped peripherals, written the VCML way: each device declares its 32-bit registers as
// members (name, offset, reset value) with small read / write handlers, and one TLM target
// socket serves them. MmioBus decodes the MMIO window for the CPUs: an address maps to one
// device and a device-relative offset, or to an address error.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tlmcheck/checker.hpp"

namespace dvp::mmio {

class Device;

// One 32-bit register. `read` returns its value (default: the stored value); `write` takes the
// written value (default: store it). Handlers run at the access's simulated time,
// sc_time_stamp() + the annotated delay, which `Device::now()` gives them.
class Register {
 public:
  Register(Device& dev, std::string name, std::uint32_t offset, std::uint32_t reset, std::string doc);
  Register& on_read(std::function<std::uint32_t()> f) {
    read_ = std::move(f);
    return *this;
  }
  Register& on_write(std::function<void(std::uint32_t)> f) {
    write_ = std::move(f);
    return *this;
  }
  Register& read_only() {
    write_ = [this](std::uint32_t) { bad_write_ = true; };
    return *this;
  }
  // Called from a write handler: the write is refused (the initiator gets an error response).
  void reject() { bad_write_ = true; }
  std::uint32_t value = 0;
  const std::string& name() const { return name_; }
  std::uint32_t offset() const { return offset_; }
  std::uint32_t reset() const { return reset_; }
  const std::string& doc() const { return doc_; }

 private:
  friend class Device;
  std::string name_;
  std::uint32_t offset_, reset_;
  std::string doc_;
  std::function<std::uint32_t()> read_;
  std::function<void(std::uint32_t)> write_;
  bool bad_write_ = false;
};

class Device : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Device> bus;

  // `access_ns`: what one register access costs the initiator.
  Device(sc_core::sc_module_name name, std::uint32_t size, double access_ns);
  std::uint32_t size() const { return size_; }
  const std::vector<Register*>& registers() const { return regs_; }
  virtual std::string device_kind() const = 0;  // "uart", "timer", ... for docs and headers

 protected:
  // The simulated time of the access being served (valid inside handlers).
  sc_core::sc_time now() const { return now_; }

 private:
  friend class Register;
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  std::uint32_t size_;
  sc_core::sc_time access_;
  sc_core::sc_time now_;
  std::vector<Register*> regs_;
  std::vector<Register*> by_word_;  // register at offset / 4, built at the first access
};

// Decodes the MMIO window: CPUs bind to `cpus`, devices are attached with their base address.
class MmioBus : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<MmioBus> cpus;
  tlm_utils::multi_passthrough_initiator_socket<MmioBus> devices;

  explicit MmioBus(sc_core::sc_module_name name);
  // Throws dvp::Error when the range overlaps another device.
  void attach(Device& d, std::uint64_t base);
  // Any other target (an RTL block's): it gets offsets from `base`, as a device does, and each
  // access costs `path_ns` on the way there and back on top of its own time (a Device counts
  // that path in its access_ns).
  template <typename Socket>
  void attach(Socket& s, const std::string& who, const std::string& kind, std::uint64_t base, std::uint64_t size,
              double path_ns) {
    add_region(Region{base, size, nullptr, who, kind, sc_core::sc_time(path_ns, sc_core::SC_NS)});
    tlmcheck::bind_checked(devices, s, tlm_checks_, std::string(name()) + " -> " + who, checkers_);
  }
  // Binds a CPU (or any initiator) to `cpus`. With checks on, each binding, this one and each
  // device's, gets a TLM base-protocol checker (debug.tlm_checks).
  template <typename Socket>
  void connect_cpu(Socket& s, const std::string& who) {
    tlmcheck::bind_checked(s, cpus, tlm_checks_, who + " -> " + name(), checkers_);
  }
  void set_tlm_checks(bool on) { tlm_checks_ = on; }
  struct Region {
    std::uint64_t base, size;
    Device* dev;  // null for a target without registers of its own (an RTL block)
    std::string name, kind;
    sc_core::sc_time path = sc_core::SC_ZERO_TIME;  // added to such a target's accesses
  };
  const std::vector<Region>& regions() const { return regions_; }
  // The device and register at an address, for fault reports ("timer0.CMP0"), or "".
  std::string describe(std::uint64_t addr) const;

 private:
  void add_region(Region r);
  void b_transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
  std::vector<Region> regions_;       // in attach order: the index is the device's socket
  std::vector<std::size_t> by_base_;  // indexes of regions_ sorted by base
  bool tlm_checks_ = false;
  tlmcheck::Checkers checkers_;
};

}  // namespace dvp::mmio
