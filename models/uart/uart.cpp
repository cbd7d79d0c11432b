// SPDX-License-Identifier: MIT
#include "uart.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/error.hpp"

namespace dvp::uart {

Uart::Uart(sc_core::sc_module_name name, std::string who, double access_ns)
    : Device(name, 0x10, access_ns),
      who_(std::move(who)),
      data_(*this, "DATA", 0x0, 0, "write: transmit the low byte"),
      status_(*this, "STATUS", 0x4, 1, "bit 0: ready to transmit (always: the model sends at once)") {
  data_.on_read([] { return 0u; }).on_write([this](std::uint32_t v) { put(char(v & 0xff)); });
  status_.read_only();
}

Uart::~Uart() {
  if (!line_.empty() && log_) log_("[" + who_ + "] " + line_);
}

void Uart::connect(const std::string& dir, std::function<void(const std::string&)> log) {
  path_ = dir + "/uart-" + who_ + ".txt";
  // A file from an earlier run into the same directory would pass for this run's output.
  std::remove(path_.c_str());
  if (!all_.empty()) file_.open(path_, std::ios::binary | std::ios::trunc);
  file_ << all_;
  log_ = std::move(log);
}

void Uart::finish() {
  if (open_failed_) throw OutputError("cannot write " + path_ + ": " + std::strerror(open_errno_));
  if (!file_.is_open()) return;
  errno = 0;
  file_.close();
  // A failed write leaves the stream failed; the reason is the last error the system gave.
  if (!file_) throw OutputError("cannot write " + path_ + ": " + (errno ? std::strerror(errno) : "write failed"));
}

void Uart::put(char c) {
  all_ += c;
  if (!file_.is_open() && !path_.empty() && !open_failed_) {
    errno = 0;
    file_.open(path_, std::ios::binary | std::ios::trunc);
    open_failed_ = !file_.is_open();  // reported by finish(); not retried per byte
    open_errno_ = errno ? errno : EIO;
  }
  if (file_.is_open()) file_.put(c).flush();
  if (c == '\n') {
    if (log_) log_("[" + who_ + "] " + line_);
    line_.clear();
  } else if (c != '\r') {
    line_ += c;
  }
}

}  // namespace dvp::uart
