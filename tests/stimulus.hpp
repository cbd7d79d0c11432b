// SPDX-License-Identifier: MIT
// A stimulus module for TLM targets: a thread that runs a test body, with blocking accesses
// that return their exact latency.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "common/time.hpp"

namespace dvp::test {

struct Stimulus : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Stimulus> socket{"socket"};
  std::function<void(Stimulus&)> body;
  explicit Stimulus(sc_core::sc_module_name n) : sc_module(n) {
    SC_HAS_PROCESS(Stimulus);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  void pause(Tick t) { wait(to_sc(t)); }
  // Issues at the current time plus `offset` without waiting; returns the completion time.
  Tick post(bool write, std::uint64_t addr, std::uint8_t* data, unsigned len, Tick offset = 0,
            tlm::tlm_response_status* status = nullptr) {
    tlm::tlm_generic_payload p;
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(data);
    p.set_data_length(len);
    p.set_streaming_width(len);
    sc_core::sc_time d = to_sc(offset);
    socket->b_transport(p, d);
    if (status)
      *status = p.get_response_status();
    else
      EXPECT_EQ(p.get_response_status(), tlm::TLM_OK_RESPONSE);
    return now_tick() + to_tick(d);
  }
  Tick align = 1;  // issue on this clock's edges, as a clocked requester would
  // Blocking access: returns its latency.
  Tick access(bool write, std::uint64_t addr, std::uint8_t* data, unsigned len) {
    if (now_tick() % align) wait(to_sc(align - now_tick() % align));
    Tick t0 = now_tick();
    Tick done = post(write, addr, data, len);
    wait(to_sc(done - t0));
    return done - t0;
  }
};

// A memory target with a fixed latency that keeps its bytes and counts accesses.
struct FixedMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<FixedMemory> socket{"socket"};
  Tick latency;
  std::map<std::uint64_t, std::uint8_t> bytes;
  unsigned reads = 0, writes = 0;
  std::vector<std::pair<bool, Tick>> log;  // (write, arrival)
  FixedMemory(sc_core::sc_module_name n, Tick lat) : sc_module(n), latency(lat) {
    socket.register_b_transport(this, &FixedMemory::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
    log.push_back({p.is_write(), now_tick() + to_tick(d)});
    for (unsigned i = 0; i < p.get_data_length(); ++i) {
      if (p.is_write())
        bytes[p.get_address() + i] = p.get_data_ptr()[i];
      else
        p.get_data_ptr()[i] = bytes.count(p.get_address() + i) ? bytes[p.get_address() + i] : 0;
    }
    (p.is_write() ? writes : reads)++;
    d += to_sc(latency);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

}  // namespace dvp::test
