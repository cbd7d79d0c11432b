// SPDX-License-Identifier: MIT
// The TLM base-protocol checker: a well-formed transaction passes untouched; each broken rule
// (by the initiator on the way in, by the target on the way back, in debug transport and DMI)
// is reported once, naming the binding, the rule, the command and the address.
#include <gtest/gtest.h>

#include <functional>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "helpers.hpp"
#include "tlmcheck/checker.hpp"

using namespace dvp;
using tlmcheck::Checker;

namespace {

struct Target : sc_core::sc_module {
  tlm_utils::simple_target_socket<Target> socket{"socket"};
  std::function<void(tlm::tlm_generic_payload&, sc_core::sc_time&)> on_b = [](tlm::tlm_generic_payload& p,
                                                                              sc_core::sc_time& d) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    d += sc_core::sc_time(10, sc_core::SC_NS);
  };
  std::function<unsigned(tlm::tlm_generic_payload&)> on_dbg = [](tlm::tlm_generic_payload& p) {
    return p.get_data_length();
  };
  std::function<bool(tlm::tlm_generic_payload&, tlm::tlm_dmi&)> on_dmi = [](tlm::tlm_generic_payload&, tlm::tlm_dmi&) {
    return false;
  };
  explicit Target(sc_core::sc_module_name n) : sc_module(n) {
    socket.register_b_transport(this, &Target::b);
    socket.register_transport_dbg(this, &Target::dbg);
    socket.register_get_direct_mem_ptr(this, &Target::dmi);
  }
  void b(tlm::tlm_generic_payload& p, sc_core::sc_time& d) { on_b(p, d); }
  unsigned dbg(tlm::tlm_generic_payload& p) { return on_dbg(p); }
  bool dmi(tlm::tlm_generic_payload& p, tlm::tlm_dmi& d) { return on_dmi(p, d); }
};

struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket{"socket"};
  Target target{"target"};
  tlmcheck::Checkers checkers;
  std::function<void(Bench&)> body;
  unsigned char data[64] = {};
  Bench() : sc_module("bench") {
    tlmcheck::bind_checked(socket, target.socket, true, "bench -> target", checkers);
    SC_HAS_PROCESS(Bench);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  // A well-formed 64-byte read at 0x1000 (the payload a test then breaks).
  static void read(tlm::tlm_generic_payload& p, unsigned char* d) {
    p.set_command(tlm::TLM_READ_COMMAND);
    p.set_address(0x1000);
    p.set_data_ptr(d);
    p.set_data_length(64);
    p.set_streaming_width(64);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  void send(const std::function<void(tlm::tlm_generic_payload&)>& breakit) {
    body = [breakit](Bench& b) {
      tlm::tlm_generic_payload p;
      read(p, b.data);
      breakit(p);
      sc_core::sc_time d = sc_core::SC_ZERO_TIME;
      b.socket->b_transport(p, d);
    };
    sc_core::sc_start();
  }
};

void expect_violation(const std::string& want) {
  EXPECT_EQ(test::bench_system().protocol().violations, 1u);
  EXPECT_EQ(test::bench_system().protocol().first, "TLM base protocol on bench -> target: " + want);
}

}  // namespace

TEST(TlmCheck, AWellFormedTransactionPassesWithItsResponseAndDelay) {
  Bench b;
  tlm::tlm_generic_payload p;
  sc_core::sc_time d;
  b.body = [&](Bench& x) {
    Bench::read(p, x.data);
    d = sc_core::sc_time(5, sc_core::SC_NS);
    x.socket->b_transport(p, d);
  };
  sc_core::sc_start();
  EXPECT_EQ(test::bench_system().protocol().violations, 0u) << test::bench_system().protocol().first;
  EXPECT_EQ(test::bench_system().protocol().checked, 1u);
  EXPECT_EQ(p.get_response_status(), tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(d, sc_core::sc_time(15, sc_core::SC_NS));
}

TEST(TlmCheck, AResponseStatusSetOnEntry) {
  Bench b;
  b.send([](tlm::tlm_generic_payload& p) { p.set_response_status(tlm::TLM_OK_RESPONSE); });
  expect_violation("response status TLM_OK_RESPONSE on entry (must be INCOMPLETE) (read at 0x1000)");
}

TEST(TlmCheck, AByteEnableThatIsNeitherOnNorOff) {
  Bench b;
  static unsigned char be[4] = {0xff, 0x0f, 0x00, 0xff};
  b.send([](tlm::tlm_generic_payload& p) {
    p.set_byte_enable_ptr(be);
    p.set_byte_enable_length(4);
  });
  expect_violation("byte enable 1 is 0xf (0x00 or 0xff) (read at 0x1000)");
}

TEST(TlmCheck, AZeroStreamingWidth) {
  Bench b;
  b.send([](tlm::tlm_generic_payload& p) { p.set_streaming_width(0); });
  expect_violation("streaming width 0 (read at 0x1000)");
}

TEST(TlmCheck, AMissingDataPointerIsNotPassedOnToTheTarget) {
  Bench b;
  bool reached = false;
  b.target.on_b = [&](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    reached = true;
    p.set_response_status(tlm::TLM_OK_RESPONSE);
  };
  b.send([](tlm::tlm_generic_payload& p) { p.set_data_ptr(nullptr); });
  expect_violation("no data pointer (read at 0x1000)");
  EXPECT_FALSE(reached);
}

TEST(TlmCheck, ATargetThatLeavesTheStatusIncomplete) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload&, sc_core::sc_time&) {};
  b.send([](tlm::tlm_generic_payload&) {});
  expect_violation("the target left the response status INCOMPLETE (read at 0x1000)");
}

TEST(TlmCheck, ATargetThatChangesTheDataLength) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    p.set_data_length(32);
  };
  b.send([](tlm::tlm_generic_payload&) {});
  expect_violation("the data pointer or length changed on the way back (read at 0x1000)");
}

TEST(TlmCheck, ATargetThatChangesTheDataOfAWrite) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    p.get_data_ptr()[5] ^= 1;  // a read may fill the data; a write's is the initiator's
  };
  b.send([](tlm::tlm_generic_payload& p) { p.set_command(tlm::TLM_WRITE_COMMAND); });
  expect_violation("the target changed the data of a write (write at 0x1000)");
}

TEST(TlmCheck, AReadsDataIsTheTargetsToFill) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    p.get_data_ptr()[5] = 0x5a;
  };
  b.send([](tlm::tlm_generic_payload&) {});
  EXPECT_EQ(test::bench_system().protocol().violations, 0u);
  EXPECT_EQ(b.data[5], 0x5a);
}

TEST(TlmCheck, ATargetThatChangesTheByteEnables) {
  Bench b;
  static unsigned char be[4] = {0xff, 0x00, 0x00, 0xff};
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    p.get_byte_enable_ptr()[1] = 0xff;
  };
  b.send([](tlm::tlm_generic_payload& p) {
    p.set_byte_enable_ptr(be);
    p.set_byte_enable_length(4);
  });
  expect_violation("the target changed the byte-enable array (read at 0x1000)");
}

TEST(TlmCheck, GpOptionFullPayloadAcceptedOnEntry) {
  Bench b;
  b.send([](tlm::tlm_generic_payload& p) { p.set_gp_option(tlm::TLM_FULL_PAYLOAD_ACCEPTED); });
  expect_violation("gp_option FULL_PAYLOAD_ACCEPTED on entry (the target's answer to FULL_PAYLOAD) (read at 0x1000)");
}

TEST(TlmCheck, ATargetThatAcceptsAFullPayloadNobodyOffered) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    p.set_gp_option(tlm::TLM_FULL_PAYLOAD_ACCEPTED);
  };
  b.send([](tlm::tlm_generic_payload&) {});
  expect_violation(
      "gp_option changed on the way back to 2 (a target may only answer FULL_PAYLOAD with FULL_PAYLOAD_ACCEPTED) (read "
      "at "
      "0x1000)");
}

TEST(TlmCheck, ATargetMayAcceptAFullPayload) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time&) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    p.set_gp_option(tlm::TLM_FULL_PAYLOAD_ACCEPTED);
  };
  b.send([](tlm::tlm_generic_payload& p) { p.set_gp_option(tlm::TLM_FULL_PAYLOAD); });
  EXPECT_EQ(test::bench_system().protocol().violations, 0u);
}

TEST(TlmCheck, ATargetMayWaitAndTakeTheWaitOffTheDelayButNotEndBeforeTheStart) {
  Bench b;
  b.target.on_b = [](tlm::tlm_generic_payload& p, sc_core::sc_time& d) {
    p.set_response_status(tlm::TLM_OK_RESPONSE);
    sc_core::wait(d);  // synchronises: legal
    d = sc_core::SC_ZERO_TIME;
  };
  b.body = [](Bench& x) {
    tlm::tlm_generic_payload p;
    Bench::read(p, x.data);
    sc_core::sc_time d(20, sc_core::SC_NS);
    x.socket->b_transport(p, d);
    EXPECT_EQ(test::bench_system().protocol().violations, 0u) << test::bench_system().protocol().first;
    x.target.on_b = [](tlm::tlm_generic_payload& q, sc_core::sc_time& dd) {
      q.set_response_status(tlm::TLM_OK_RESPONSE);
      dd = sc_core::SC_ZERO_TIME;  // drops 20 ns it never waited
    };
    Bench::read(p, x.data);
    d = sc_core::sc_time(20, sc_core::SC_NS);
    x.socket->b_transport(p, d);
  };
  sc_core::sc_start();
  expect_violation(
      "the transaction ends before it was issued (at 0 s past the call, issued at 20 ns) (read at 0x1000)");
}

TEST(TlmCheck, DebugTransportThatReportsMoreBytesThanAsked) {
  Bench b;
  b.target.on_dbg = [](tlm::tlm_generic_payload& p) { return p.get_data_length() + 1; };
  b.body = [](Bench& x) {
    tlm::tlm_generic_payload p;
    Bench::read(p, x.data);
    x.socket->transport_dbg(p);
  };
  sc_core::sc_start();
  expect_violation("debug: 65 bytes transferred of 64 (read at 0x1000)");
}

TEST(TlmCheck, ADmiGrantWhoseRangeMissesTheAddress) {
  Bench b;
  static unsigned char mem[256];
  b.target.on_dmi = [](tlm::tlm_generic_payload&, tlm::tlm_dmi& d) {
    d.set_dmi_ptr(mem);
    d.set_start_address(0x2000);
    d.set_end_address(0x20ff);
    d.allow_read_write();
    return true;
  };
  b.body = [](Bench& x) {
    tlm::tlm_generic_payload p;
    Bench::read(p, x.data);
    tlm::tlm_dmi dmi;
    x.socket->get_direct_mem_ptr(p, dmi);
  };
  sc_core::sc_start();
  expect_violation("DMI: the range 0x2000..0x20ff does not hold the address (read at 0x1000)");
}

TEST(TlmCheck, ADmiGrantForAWriteWithReadAccessOnly) {
  Bench b;
  static unsigned char mem[0x2000];
  b.target.on_dmi = [](tlm::tlm_generic_payload&, tlm::tlm_dmi& d) {
    d.set_dmi_ptr(mem);
    d.set_start_address(0);
    d.set_end_address(0x1fff);
    d.allow_read();
    return true;
  };
  b.body = [](Bench& x) {
    tlm::tlm_generic_payload p;
    Bench::read(p, x.data);
    p.set_command(tlm::TLM_WRITE_COMMAND);
    tlm::tlm_dmi dmi;
    x.socket->get_direct_mem_ptr(p, dmi);
  };
  sc_core::sc_start();
  expect_violation("DMI granted for a write without write access (write at 0x1000)");
}
