/* SPDX-License-Identifier: MIT */
/* The C interface between davinci-vp and a Verilated RTL plug-in (a shared object built by
 * dvp-verilate). The plug-in exports one function, dvp_rtl_plugin(), returning a table of entry
 * points; the platform clocks the model through them and reads and writes its top-level ports
 * in place. Plain C so a plug-in built by another compiler still loads; versioned so an old
 * plug-in is refused by name instead of misread. */
#ifndef DVP_RTL_PLUGIN_H
#define DVP_RTL_PLUGIN_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DVP_RTL_ABI_VERSION 1u

enum dvp_rtl_dir { DVP_RTL_IN = 0, DVP_RTL_OUT = 1, DVP_RTL_INOUT = 2 };

/* One top-level port. `data` points at the model's own storage: a little-endian integer of
 * `bytes` bytes (Verilator's CData / SData / IData / QData, or the 32-bit words of a VlWide
 * for ports over 64 bits), of which the low `bits` are the port. */
struct dvp_rtl_port {
  const char* name;
  uint32_t dir;
  uint32_t bits;
  uint32_t bytes;
  void* data;
};

struct dvp_rtl_api {
  uint32_t abi_version;
  const char* top;     /* the Verilog top module's name */
  const char* sources; /* the files it was built from, for reports */
  /* A new instance; `name` is its scope in waveforms. */
  void* (*create)(const char* name);
  void (*destroy)(void* inst);
  /* The ports, valid as long as the instance lives. */
  size_t (*ports)(void* inst, const struct dvp_rtl_port** out);
  /* Settles the model after its inputs changed; `time_ps` is $time for the design. */
  void (*eval)(void* inst, uint64_t time_ps);
  /* Starts an FST waveform at `path`; returns 0, or -1 when the plug-in was built without
   * tracing or the file cannot be written. */
  int (*trace_open)(void* inst, const char* path);
  void (*trace_dump)(void* inst, uint64_t time_ps);
  /* NULL while the design runs; after a $stop, $fatal, $finish or a failed assertion, what it
   * said (file, line, message). */
  const char* (*stopped)(void* inst);
  /* Runs final blocks and closes the waveform. */
  void (*finish)(void* inst);
};

typedef const struct dvp_rtl_api* (*dvp_rtl_plugin_fn)(void);

#ifdef __cplusplus
}
#endif
#endif
