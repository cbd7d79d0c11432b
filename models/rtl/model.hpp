// SPDX-License-Identifier: MIT
// A Verilated RTL model loaded from a plug-in (dvp_rtl_plugin.h): its ports as Pins, its
// evaluation, its waveform. The platform side of the plug-in interface; the bridges and the
// block's clock are built on it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "dvp_rtl_plugin.h"

namespace dvp::rtl {

// One port of the model: reads and writes its storage in place (no copies per cycle).
class Pin {
 public:
  Pin() = default;
  explicit Pin(const dvp_rtl_port* p) : p_(p) {}
  explicit operator bool() const { return p_ != nullptr; }
  const char* name() const { return p_->name; }
  unsigned bits() const { return p_->bits; }
  bool is_input() const { return p_->dir == DVP_RTL_IN; }
  // The low 64 bits.
  std::uint64_t get() const;
  // Sets the port to `v` masked to its width (wide ports: the low 64 bits, the rest cleared).
  void set(std::uint64_t v) const;
  // The port as bytes, little-endian: `n` = bits / 8 (a data bus), or fewer.
  void get_bytes(std::uint8_t* out, unsigned n) const;
  void set_bytes(const std::uint8_t* in, unsigned n) const;

 private:
  const dvp_rtl_port* p_ = nullptr;
};

class Model {
 public:
  // Loads `path` (dlopen) and creates an instance named `name`; throws dvp::Error naming the
  // file and what is wrong with it (missing, not a plug-in, another ABI version).
  Model(const std::string& path, const std::string& name);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& path() const { return path_; }
  const char* top() const { return api_->top; }
  // The port named `n`, or an empty Pin.
  Pin pin(const std::string& n) const;
  const std::vector<dvp_rtl_port>& ports() const { return ports_; }
  // "clk, rst_n, ...": the ports' names, for messages.
  std::string port_names() const;
  void eval(std::uint64_t time_ps) { api_->eval(inst_, time_ps); }
  // Throws dvp::Error when the waveform cannot be started.
  void trace_open(const std::string& path);
  bool tracing() const { return tracing_; }
  void dump(std::uint64_t time_ps) {
    if (tracing_) api_->trace_dump(inst_, time_ps);
  }
  // What the design said when it ran $stop, $fatal, $finish or failed an assertion, or null.
  const char* stopped() const { return api_->stopped(inst_); }
  void finish();

 private:
  std::string path_;
  void* lib_ = nullptr;
  const dvp_rtl_api* api_ = nullptr;
  void* inst_ = nullptr;
  std::vector<dvp_rtl_port> ports_;
  std::map<std::string, std::size_t> by_name_;
  bool tracing_ = false, finished_ = false;
};

}  // namespace dvp::rtl
