// SPDX-License-Identifier: MIT
/* The interface between the platform and its firmware, shared by both sides (C and C++): the
   job table the scenario loader places in DRAM, and the task scheduler's submission and
   completion queue entries. All fields little-endian, naturally aligned. */
#ifndef DVP_ABI_H
#define DVP_ABI_H
#include <stdint.h>

/* The job table: at DVP_JOB_TABLE (16 MiB into DRAM, after the firmware's own 16 MiB). */
#define DVP_JOB_TABLE_OFFSET 0x1000000ull
#define DVP_JOB_MAGIC 0x31534a4f42505644ull /* "DVPBOJS1" */
#define DVP_MAX_STREAMS 8
#define DVP_MAX_EVENTS 64
#define DVP_MAX_TASKS 4096 /* tasks the runtime firmware takes (a network of 56 layers, batch 64) */

enum dvp_task_type {
  DVP_TASK_KERNEL = 1,   /* an AI Core kernel: blocks onto free AI Cores */
  DVP_TASK_RECORD = 2,   /* set event `event` */
  DVP_TASK_WAIT = 3,     /* wait until event `event` is set, then clear it */
  DVP_TASK_BARRIER = 4,  /* wait until every other stream has nothing queued or running */
  DVP_TASK_AICPU = 5,    /* an AI CPU kernel: `entry` is its function, `args` its argument table */
  DVP_TASK_DVPP = 6,     /* a media command: `entry` is the engine (enum dvpp_engine), `args` the GM
                            address of a struct dvpp_cmd, whose result fields come back filled */
  DVP_TASK_PRELOAD = 7,  /* the SDMA engine brings `code_bytes` bytes at GM address `args` into the L2;
                            the task completes once the engine has taken it (the stream goes on; a
                            kernel reading a line still on its way waits for it in the L2) */
  DVP_TASK_DISCARD = 8,  /* the SDMA engine drops the L2's copies of the whole lines in `code_bytes`
                            bytes at GM address `args`, dirty ones unwritten (CHI's MakeInvalid): for
                            memory no task reads again, such as activations no later layer uses. The
                            task completes once the engine has taken it, as a preload's */
  DVP_TASK_PREFETCH = 9, /* a preload at the engine's low priority: it issues the lines only while no
                            preload is queued, so they fill time the DRAM would otherwise leave idle
                            (weights wanted after the next preloads' kernels). Completes as a
                            preload's */
};

/* The task scheduler's submission rings on DVPP, one per engine, in the job table's 16 MiB. */
#define DVP_TS_DVPP_RINGS_OFFSET (DVP_JOB_TABLE_OFFSET + 0xC00000ull)
#define DVP_TS_DVPP_RING_ENTRIES 256

/* AI CPU kernels (the firmware's function numbers). Argument table, 8 bytes each:
   topk, argmax: x (f32 rows x cols), rows, cols, k, values (f32 rows x k; argmax: unused),
     indices (s32);
   concat: y, outer, n, then n pairs (x_j, bytes_j): each of y's `outer` rows is the inputs'
     rows of bytes_j side by side, in order;
   gather: y, outer, n, row_bytes, x, x_rows, indices (s32 n): y's row (o, i) is x's row
     (o, indices[i]) of `outer` blocks of x_rows rows; a negative index counts from the end;
   expand: y, x, outer, mid, run_bytes: y's row (o, r) of run_bytes is x's row o, for r < mid
     (numpy broadcasting of x, outer x 1 x run, to outer x mid x run);
   slice: y, x, outer, outer_stride, rows, row_stride, run_bytes, start (bytes): y's run (o, r) of
     run_bytes is x's from start + o outer_stride + r row_stride, for o < outer, r < rows; row_stride
     is signed (negative: a slice backward, numpy's x[::-1]). */
enum dvp_aicpu_func {
  DVP_AICPU_TOPK = 1,
  DVP_AICPU_ARGMAX = 2,
  DVP_AICPU_CONCAT = 3,
  DVP_AICPU_GATHER = 4,
  DVP_AICPU_EXPAND = 5,
  DVP_AICPU_SLICE = 6
};
/* What an AI CPU kernel writes to AICPU_DONE (0: done). */
enum dvp_aicpu_status {
  DVP_AICPU_OK = 0,
  DVP_AICPU_BAD_ARGS = 1,    /* sizes the kernel does not take (topk's k of 0 or over 64, expand's run of 0) */
  DVP_AICPU_BAD_INDEX = 2,   /* gather: an index outside [-x_rows, x_rows) */
  DVP_AICPU_NO_FUNCTION = 99 /* a function number the firmware does not have */
};

/* One task: a job table entry, and (with `id` set by the firmware) a submission queue entry. */
struct dvp_task {
  uint32_t type;       /* enum dvp_task_type */
  uint32_t stream;     /* 0 .. DVP_MAX_STREAMS - 1 */
  uint32_t id;         /* the firmware's number for it; comes back in its completion */
  uint32_t event;      /* RECORD / WAIT */
  uint64_t image;      /* KERNEL: GM address of the kernel's code */
  uint64_t code_bytes; /* KERNEL: its size */
  uint32_t entry;      /* KERNEL: byte offset of the first instruction */
  uint32_t blocks;     /* KERNEL: block count */
  uint64_t args;       /* KERNEL: GM address of the argument table */
  char name[24];       /* for reports */
};

struct dvp_job_table {
  uint64_t magic;
  uint64_t tasks;         /* entries that follow */
  uint64_t streams;       /* streams used (1 + the highest stream number) */
  uint64_t control_cores; /* cores 0 .. control_cores - 1 are control CPUs; the rest AI CPUs */
  struct dvp_task task[];
};

/* Completion queue entry, written by the task scheduler. */
enum dvp_status { DVP_OK = 0, DVP_FAULT = 1 };
struct dvp_completion {
  uint32_t id;         /* the task's id */
  uint32_t status;     /* enum dvp_status */
  uint32_t fault_core; /* DVP_FAULT: the AI Core that faulted */
  uint32_t fault_block;
  uint64_t fault_pc;
  uint64_t start_ns; /* when the scheduler started the task */
  uint64_t end_ns;   /* when it completed */
  char fault_reason[88];
};

/* DVPP, the media engines (models/dvpp; docs/models.md#dvpp). Each engine has a submission
   queue of commands in DRAM (registers SQ_BASE / SQ_SIZE, doorbell SQ_TAIL); a free channel
   takes the next command, reads its input and writes its output through the ring, then writes
   the result fields of the command back and counts it in DONE (and ERRORS), raising the
   engine's interrupt. Engine numbers are fixed; a platform builds those it configures. */
enum dvpp_engine {
  DVPP_JPEGD = 0, /* JPEG decode: baseline Huffman, 8-bit, 4:2:0 / 4:2:2 / 4:4:4 / grey */
  DVPP_PNGD = 1,  /* PNG decode: 8-bit grey, grey + alpha, RGB, RGBA, palette */
  DVPP_JPEGE = 2, /* JPEG encode: a YUV semi-planar or grey picture to a baseline JPEG */
  DVPP_VDEC = 3,  /* video decode: H.264 (baseline, main, high) and H.265 (main), 8-bit 4:2:0 */
  DVPP_VENC = 4,  /* video encode: NV12 / NV21 frames to an H.264 (high) or H.265 (main) stream, one QP */
  DVPP_VPC = 5,   /* picture processing: crop, resize (bilinear), YUV <-> RGB conversion */
  DVPP_ENGINES = 6
};

/* Picture formats. Planes follow one another at the stride: Y is stride_w x stride_h bytes,
   then the interleaved chroma plane (UV: U first; VU for NV21) at half height for 4:2:0, full
   height for 4:2:2 (half width) and 4:4:4 (full width, 2 x stride_w bytes a row). RGB888 and
   RGBA8888 are one plane of stride_w x 3 (4) bytes a row. P010 is NV12 of 16-bit little-endian
   samples (2 x stride_w bytes a row in both planes), the 10 bits in the high bits. */
enum dvpp_format {
  DVPP_FMT_NATIVE = 0, /* the engine's own for the input (JPEGD: the JPEG's sampling; PNGD: RGB or RGBA) */
  DVPP_FMT_NV12 = 1,   /* YUV 4:2:0 semi-planar, UV */
  DVPP_FMT_NV21 = 2,   /* YUV 4:2:0 semi-planar, VU */
  DVPP_FMT_YUV422SP = 3,
  DVPP_FMT_YUV444SP = 4,
  DVPP_FMT_YUV400 = 5, /* Y only */
  DVPP_FMT_RGB888 = 6,
  DVPP_FMT_RGBA8888 = 7,
  DVPP_FMT_P010 = 8 /* YUV 4:2:0 semi-planar, UV, 10 bits in 16 (VDEC's output of a 10-bit stream) */
};

enum dvpp_status {
  DVPP_PENDING = 0,
  DVPP_DONE = 1,
  DVPP_ERR_CORRUPT = 2,     /* the input is not a valid stream of its kind, or is truncated */
  DVPP_ERR_UNSUPPORTED = 3, /* valid, but not what the engine decodes (progressive JPEG, 16-bit PNG) */
  DVPP_ERR_SIZE = 4,        /* width or height outside the engine's range */
  DVPP_ERR_ALIGN = 5,       /* a buffer address not aligned as the engine requires */
  DVPP_ERR_OUT_SIZE = 6,    /* the output buffer is smaller than the picture */
  DVPP_ERR_FORMAT = 7,      /* an output format the engine cannot write for this input */
  DVPP_ERR_BUS = 8          /* a read or write of a buffer failed (no memory there) */
};

/* For reports, on both sides. */
static inline const char* dvpp_status_name(uint32_t s) {
  static const char* const names[] = {"pending",
                                      "done",
                                      "corrupt input",
                                      "unsupported input",
                                      "size out of range",
                                      "misaligned buffer",
                                      "output buffer too small",
                                      "output format not available",
                                      "bus error"};
  return s < sizeof names / sizeof names[0] ? names[s] : "unknown status";
}

/* Colour conversion between YUV and RGB (VPC): BT.601 full range (JFIF, what JPEGD writes),
   BT.601 limited range (SD video), BT.709 limited range (HD video). */
enum dvpp_csc { DVPP_CSC_BT601_FULL = 0, DVPP_CSC_BT601_LIMITED = 1, DVPP_CSC_BT709_LIMITED = 2 };

/* Elementary streams VDEC decodes: Annex B byte streams (start codes before NAL units). */
enum dvpp_stream { DVPP_STREAM_H264 = 1, DVPP_STREAM_H265 = 2 };

/* One command: the firmware fills the first part; the engine writes the second. */
struct dvpp_cmd {
  uint64_t in_addr; /* input bytes (a .jpg / .png file's contents, an elementary stream; VPC: a picture) */
  uint64_t in_size;
  uint64_t out_addr;   /* output buffer (VDEC: every frame, one after another) */
  uint64_t out_size;   /* its capacity */
  uint32_t out_format; /* enum dvpp_format */
  uint32_t tag;        /* the firmware's */
  /* VPC: the input picture as laid out, the crop taken of it, the size it is resized to. */
  uint32_t in_format; /* enum dvpp_format (not NATIVE) */
  uint32_t in_width, in_height, in_stride_w, in_stride_h;
  uint32_t crop_x, crop_y, crop_w, crop_h; /* crop_w or crop_h 0: the whole picture */
  uint32_t out_width, out_height;          /* 0: the crop's size */
  uint32_t csc;                            /* enum dvpp_csc, when YUV meets RGB */
  /* VDEC, VENC: the stream's codec (enum dvpp_stream), and the most frames to decode (0: all) or
     the frames to encode (consecutive pictures at the input; 0: every whole one in in_size). */
  uint32_t stream;
  uint32_t max_frames;
  uint32_t quality; /* JPEGE: 1 .. 100, as libjpeg's scale of the standard tables */
  uint32_t qp;      /* VENC: the constant quantisation parameter, 0 .. 51 (lower: better, larger) */
  uint32_t gop;     /* VENC: frames from one IDR frame to the next (0: only the first is one), <= 2^30 */
  /* VPC: the canvas the resized crop is pasted into (0 x 0: its own size) and where; fill_mode 0
     fills the rest with `fill` (padding, letterboxing), 1 writes the crop only and leaves the
     rest as it is in memory (stitching: several commands paste into one canvas). fill: the
     output's channels a byte each from the low byte (Y U V; R G B A). */
  uint32_t canvas_w, canvas_h, paste_x, paste_y;
  uint32_t fill, fill_mode;
  /* Written by the engine. */
  uint32_t status; /* enum dvpp_status; the command is written back whole, then DONE counts it */
  uint32_t format; /* the format written */
  uint32_t width, height;
  uint32_t stride_w, stride_h; /* pixels and rows of the planes as laid out */
  uint32_t frames;             /* pictures written (VDEC: frames of the stream) */
  uint32_t channel;
  uint64_t out_bytes;        /* bytes written */
  uint64_t start_ns, end_ns; /* when a channel took it, and when it completed */
};

#endif
