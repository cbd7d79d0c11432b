// SPDX-License-Identifier: MIT
// UART (transmit side): each byte written to DATA goes to DIR/uart-<who>.txt, and each complete
// line to the run log as "[<who>] text". Register map: docs/peripherals.md. The file is created
// at the first byte: a core that never printed (or never ran) leaves no empty file behind.
#pragma once
#include <fstream>
#include <functional>

#include "mmio/mmio.hpp"

namespace dvp::uart {

class Uart : public mmio::Device {
 public:
  Uart(sc_core::sc_module_name name, std::string who, double access_ns);
  ~Uart() override;
  std::string device_kind() const override { return "uart"; }
  // Where the text goes: `dir`/uart-<who>.txt, and `log` for each line (may be empty).
  void connect(const std::string& dir, std::function<void(const std::string&)> log);
  const std::string& text() const { return all_; }  // everything written so far
  // Closes the file at the end of the run; throws OutputError naming it if a write failed.
  void finish();

 private:
  void put(char c);
  std::string who_, line_, all_, path_;
  std::ofstream file_;
  bool open_failed_ = false;
  int open_errno_ = 0;
  std::function<void(const std::string&)> log_;
  mmio::Register data_, status_;
};

}  // namespace dvp::uart
