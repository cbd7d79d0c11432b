// SPDX-License-Identifier: MIT
#include "gemm.hpp"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "aicore/kernel_builder.hpp"
#include "common/error.hpp"

namespace dvp::kernels {

using namespace aicore;

std::string GemmTiling::str() const {
  return std::to_string(mt) + " x " + std::to_string(nt) + " tiles, k in chunks of " + std::to_string(kt);
}

namespace {

// L0C parts of an nt-wide GEMM tile: two when it has an even number of fractal columns.
// A conv's L0C is one part (see GemmBuilder::plan).
int gemm_parts(std::uint32_t nt, bool conv = false) { return !conv && (nt / 16) % 2 == 0 ? 2 : 1; }

std::uint64_t narrow_blocks(const GemmShape& s);

// An f16 / bf16 residual's f32 cast, one segment of rows at a time (up to 255 rows of up to 64
// columns): a scratch every slot shares, as the vector unit takes one segment after another.
std::uint64_t gemm_residual_scratch(const GemmShape& s, std::uint32_t mt, std::uint64_t ntp) {
  if (!s.residual || dtype_bytes(s.out) == 4) return 0;
  return std::uint64_t(std::min<std::uint32_t>(255, mt)) * std::min<std::uint64_t>(64, ntp) * 4;
}

// The UB a tile's epilogue is admitted by (gemm_tiling): one slot of the accumulators, their cast,
// the residual and its f32 cast, each in a place of its own, and the rows.
std::uint64_t gemm_epilogue_admits(const GemmShape& s, std::uint32_t mt, std::uint32_t nt, bool conv) {
  const std::uint64_t ntp = nt / gemm_parts(nt, conv);
  const unsigned ob = dtype_bytes(s.out);
  const bool cast = s.out != DType::F32 && s.out != DType::S32;
  const unsigned per = 4 + (cast ? ob : 0) + (s.residual ? ob + (ob != 4 ? 4 : 0) : 0);
  return std::uint64_t(mt) * ntp * per + (int(s.bias) + int(s.channel_scale)) * std::uint64_t(nt) * 4 +
         32 * narrow_blocks(s);
}

// UB bytes of the vector epilogue with `slots` buffers of an mt x nt / parts tile: each holds the
// accumulators, their cast (when C's type differs) and the residual tile of C's type, which
// shares the cast's place when there is one (each segment's residual is read before its cast is
// written there); then the residual's f32 scratch, the tile's bias and scale rows (a set of them
// per slot where the slots alternate between tiles: GemmBuilder::alt_slots).
std::uint64_t gemm_epilogue_ub(const GemmShape& s, std::uint32_t mt, std::uint32_t nt, bool conv, int slots) {
  const std::uint64_t ntp = nt / gemm_parts(nt, conv);
  const unsigned ob = dtype_bytes(s.out);
  const std::uint64_t row_sets = ntp == nt ? slots : 1;  // one-part tiles: a set of rows per slot
  const unsigned nrows = int(s.bias) + int(s.channel_scale);
  if (s.half_epilogue())  // the f16 tile and residual; the rows as loaded (f32) and in f16
    return slots * std::uint64_t(mt) * ntp * (s.residual ? 4 : 2) + row_sets * nrows * std::uint64_t(nt) * 6 +
           32 * narrow_blocks(s);
  const bool cast = s.out != DType::F32 && s.out != DType::S32;
  const unsigned per = 4 + (cast ? ob : 0) + (s.residual && !cast ? ob : 0);
  // (and the last blocks of a tile whose rows are narrower than it: GemmBuilder::narrow_out)
  return slots * std::uint64_t(mt) * ntp * per + gemm_residual_scratch(s, mt, ntp) +
         row_sets * nrows * std::uint64_t(nt) * 4 + 32 * narrow_blocks(s);
}

// C's rows end inside 32-byte blocks (n x its bytes is not a multiple of 32): the vector
// epilogue writes them row by row (GemmBuilder::ragged_out).
bool gemm_ragged(const GemmShape& s) { return s.vector_epilogue() && std::uint64_t(s.n) * dtype_bytes(s.out) % 32; }

// Ragged rows narrower than any tile (under 16 columns, or under one block: 10 f32 logits, 3
// f16): one column tile holds them whole, and they go out row by row (GemmBuilder::narrow_out).
bool gemm_narrow(const GemmShape& s) {
  return gemm_ragged(s) && (s.n < 16 || std::uint64_t(s.n) * dtype_bytes(s.out) < 32);
}

// The 32-byte blocks a narrow row is written in, from its first byte (1 for any other shape: the
// UB the epilogue reserves for a tile's assembled last blocks).
std::uint64_t narrow_blocks(const GemmShape& s) {
  return gemm_narrow(s) ? (std::uint64_t(s.n) * dtype_bytes(s.out) + 31) / 32 : 1;
}

// Ragged rows of a block or more take tiles no wider than n: the last column tile is shifted left
// to end at n (GemmBuilder::shift_n), so every tile's rows are whole blocks. Rows narrower than a
// tile (gemm_narrow: under one block, or under 16 columns) take tiles of 32 bytes or more, so that
// the blocks assembled at a tile's end start inside it (16 rows of one s8 are 16 bytes: such a
// tile takes 32 rows).
bool ragged_tile_fits(const GemmShape& s, std::uint32_t mt, std::uint32_t nt) {
  const std::uint64_t row_bytes = std::uint64_t(s.n) * dtype_bytes(s.out);
  return gemm_narrow(s) ? mt * row_bytes >= 32 : nt <= s.n;
}

// The estimated cycles of a GEMM in mt x nt tiles: the tiles go round the cores in waves; a
// tile takes the longer of its cube steps (edge tiles compute whole, on zeros) and its loads
// (what exists of A's rows and B's columns, through MTE2), which overlap.
std::uint64_t gemm_estimate(const AiCoreConfig& cfg, const GemmShape& s, std::uint32_t mt, std::uint32_t nt,
                            std::uint64_t k_pad) {
  const std::uint64_t tiles = ((s.m + mt - 1) / mt) * ((s.n + nt - 1) / nt);
  const std::uint64_t waves = (tiles + cfg.cores - 1) / cfg.cores;
  const unsigned eb = dtype_bytes(s.in);
  // A cube step covers cube_k fp16 elements of k, twice as many int8 (the same 32 bytes).
  const std::uint64_t step_k = std::uint64_t(cfg.cube_k) * 2 / eb;
  const std::uint64_t steps =
      ((mt + cfg.cube_m - 1) / cfg.cube_m) * ((nt + cfg.cube_n - 1) / cfg.cube_n) * ((k_pad + step_k - 1) / step_k);
  const std::uint64_t compute = steps * cfg.cube_cycles_per_step;
  const std::uint64_t bytes = (std::min<std::uint64_t>(mt, s.m) + std::min<std::uint64_t>(nt, s.n)) * k_pad * eb;
  const std::uint64_t load = bytes / cfg.gm_read_bytes_per_cycle;
  return waves * std::max(compute, load);
}

// How a conv's feature map sits in L1: whole, loaded once; or in bands of input rows, one per
// output tile, two in L1 so the next tile's band loads while this tile computes; or, for a
// one-row map whose row does not fit (a 1-D conv over a long sequence), in bands of its columns.
struct ConvL1 {
  bool whole = false;
  bool columns = false;         // bands of input columns (conv_col_band)
  std::uint32_t band_rows = 0;  // the tallest band (columns: the widest)
  std::uint64_t area = 0;       // bytes of the whole map, or of one band slot (whole 512 B)
  std::uint64_t need(int nb, std::uint64_t b_bytes) const { return (whole ? area : 2 * area) + nb * b_bytes; }
};

// The smallest tile's band, in words: "2 input rows x 56 x 64 channels", "258 input columns x 512 channels".
std::string band_words(const ConvShape& c, const ConvL1& fm) {
  const std::string ch = std::to_string(c.c1e() * c.c0) + " channels";
  if (fm.columns) return std::to_string(fm.band_rows) + " input columns x " + ch;
  return std::to_string(fm.band_rows) + " input rows x " + std::to_string(c.w) + " x " + ch;
}

ConvL1 conv_l1_columns(const ConvShape& c, std::uint32_t mt, std::uint64_t tiles_m) {
  ConvL1 band;
  band.columns = true;
  for (std::uint64_t r = 0; r < tiles_m; ++r)
    band.band_rows = std::max(band.band_rows, conv_col_band(c, mt, std::uint32_t(r)).rows);
  const std::uint64_t bytes = std::uint64_t(c.c1e()) * band.band_rows * c.c0 * 2;
  band.area = ((bytes + 31) / 32 * 32 + 511) / 512 * 512;
  return band;
}

// For mt x nt output tiles on `cores` cores. The whole map costs its load before the first
// tile, nothing overlapping it; bands overlap compute but each tile loads its own. Whole when
// it fits and a core's bands would move more than twice the map's bytes (many tiles of cout on
// the same rows: a strided 1 x 1 on a small map), else bands (s1-3x3-64 on ascend310: 53.5% of
// peak whole, 65.0% in bands; twice, not once: on ascend310 the 1 x 1 64 -> 256 layer gains
// 8% and none loses, the stem in C0 = 4 takes 101 us in bands, 113 whole).
// With `columns`, a one-row map that fits neither way takes column bands (conv_l1_columns), unless
// its padding is wider than the window reaches (a tile could then read no column of it).
ConvL1 conv_l1(const ConvShape& c, std::uint32_t mt, std::uint32_t nt, std::uint64_t b_bytes, std::uint64_t l1,
               unsigned cores, bool columns = true) {
  // A band holds one input row of each C1 group of an extended group (a tile's channels); the
  // whole map every C1 group. A copy moves whole 32-byte blocks (the small-channel map's rows
  // are not).
  const std::uint64_t pos_bytes = std::uint64_t(c.c0) * 2, row_bytes = std::uint64_t(c.c1e()) * c.w * pos_bytes;
  const std::uint64_t plane_blocks = (std::uint64_t(c.h) * c.w * pos_bytes + 31) / 32;
  const std::uint64_t m = std::uint64_t(c.ho()) * c.wo(), tiles_m = (m + mt - 1) / mt;
  ConvL1 whole, band;
  whole.whole = true;
  whole.area = (c.c1() * plane_blocks * 32 + 511) / 512 * 512;
  // Whole: load3d's m_start (16 bits) counts positions of the whole output, and one copy moves
  // each C1 plane in blocks of 32 bytes (16 bits).
  const bool whole_fits = whole.need(2, b_bytes) <= l1 && m <= 65535 && plane_blocks <= 65535;
  for (std::uint64_t r = 0; r < tiles_m; ++r)
    band.band_rows = std::max(band.band_rows, conv_band(c, mt, std::uint32_t(r)).rows);
  band.area = ((row_bytes * band.band_rows + 31) / 32 * 32 + 511) / 512 * 512;
  const std::uint64_t tiles = tiles_m * ((c.cout + nt - 1) / nt), per_core = (tiles + cores - 1) / cores;
  // A band copy's block_len (16 bits) counts its rows' positions (C0 = 16).
  const bool band_fits = band.need(2, b_bytes) <= l1 && (c.c0 != 16 || std::uint64_t(band.band_rows) * c.w <= 65535);
  const std::uint32_t reach = c.dil_w * (c.kw - 1);
  if (columns && !whole_fits && !band_fits && c.one_row() && c.pad_l <= reach && c.pad_r <= reach)
    return conv_l1_columns(c, mt, tiles_m);
  return whole_fits && (!band_fits || per_core * band.area > 2 * whole.area) ? whole : band;
}

}  // namespace

namespace {

// [a, b) of the padded map's rows (or columns), `pad` before its `size`, as the band that reads
// them: its first row, its rows, the padding before and after it.
ConvBand clipped(std::int64_t a, std::int64_t b, std::int64_t pad, std::int64_t size) {
  const std::int64_t first = std::max(a, pad) - pad, end = std::min(b, size + pad) - pad;
  ConvBand band;
  band.top = std::uint32_t(first);
  band.rows = std::uint32_t(std::max<std::int64_t>(end - first, 0));
  band.pad_t = std::uint32_t(std::max(a, pad) - a);
  band.pad_b = std::uint32_t(b - std::min(b, size + pad));
  return band;
}

}  // namespace

ConvBand conv_band(const ConvShape& c, std::uint32_t mt, std::uint32_t row) {
  const std::int64_t m0 = std::int64_t(row) * mt, wo = c.wo(), st = c.stride_h;
  const std::int64_t r0 = m0 / wo, rl = std::min<std::int64_t>((m0 + mt - 1) / wo, std::int64_t(c.ho()) - 1);
  // Input rows [a, b) of the padded map feed output rows r0..rl.
  const std::int64_t a = r0 * st, b = rl * st + std::int64_t(c.dil_h) * (c.kh - 1) + 1;
  ConvBand band = clipped(a, b, c.pad_t, c.h);
  band.m_start = std::uint32_t(m0 - r0 * wo);
  return band;
}

ConvBand conv_col_band(const ConvShape& c, std::uint32_t mt, std::uint32_t row) {
  const std::int64_t m0 = std::int64_t(row) * mt, st = c.stride_w;
  const std::int64_t last = std::min<std::int64_t>(m0 + mt, c.wo()) - 1;
  // Input columns [a, b) of the padded row feed output positions m0..last.
  return clipped(m0 * st, last * st + std::int64_t(c.dil_w) * (c.kw - 1) + 1, c.pad_l, c.w);
}

namespace {

// The shape's types, scale and sizes, as the GEMM takes them.
void check_gemm(const GemmShape& s) {
  const bool int8 = s.in == DType::S8;
  if (s.in != DType::F16 && s.in != DType::BF16 && !int8) throw Error("gemm: inputs are f16, bf16 or s8");
  if (int8 && !s.b_transposed) throw Error("gemm: an int8 B must be given transposed (n x k): set b_transposed");
  if (int8 && s.out != DType::S32 && s.out != DType::S8 && s.out != DType::F16 && s.out != DType::F32)
    throw Error("gemm: int8 inputs give an s32 output, or with a scale an s8, f16 or f32 one");
  if (!int8 && s.out == DType::S8) throw Error("gemm: an s8 output needs s8 inputs (and a scale)");
  if (s.scale != 1.0f && (!int8 || s.out == DType::S32))
    throw Error("gemm: a scale requantizes an int8 GEMM's s32 sums to an s8, f16 or f32 output");
  if (!(s.scale > 0.0f)) throw Error("gemm: the scale must be positive");
  if (int8 && (s.channel_scale || s.residual || s.relu6))
    throw Error("gemm: a per-column scale, a residual and ReLU6 take f16 or bf16 inputs");
  if (!int8 && s.out != DType::F32 && s.out != DType::F16 && s.out != DType::BF16)
    throw Error("gemm: f16 and bf16 inputs give an f32, f16 or bf16 output");
  if (s.out_nc1hwc0 && (s.n % 16 || int8))
    throw Error("gemm: an NC1HWC0 C takes n a multiple of 16 (got " + std::to_string(s.n) + ") and f16 or bf16 inputs");
  if (!s.m || !s.n || !s.k)
    throw Error("gemm: m, k and n must be at least 1 (got " + std::to_string(s.m) + " x " + std::to_string(s.k) +
                " x " + std::to_string(s.n) + ")");
  // Configuration words hold strides of 16 bits: k (A, and B stored transposed) and n (B).
  if (s.k > 65535 || (!s.b_transposed && s.n > 65535))
    throw Error("gemm: k (and n, for B stored k x n) must be at most 65535 (the ND -> Nz stride field)");
  if (s.b_fractal && !s.b_transposed) throw Error("gemm: a B in fractal_z is B^T (n x k): set b_transposed");
  if (s.f16_epilogue && (s.out != DType::F16 || int8))
    throw Error("gemm: an f16 epilogue takes an f16 C and f16 or bf16 inputs");
  if (s.b_fractal && s.n > kFractalMaxRows)
    throw Error("gemm: a B in fractal_z takes n up to " + std::to_string(kFractalMaxRows) +
                " (its rows, padded to 16, are the DataCopy gap field)");
  // The vector epilogue copies C's rows (and the residual's) with a gap of C's other columns: 16
  // bits of 32-byte blocks.
  if (s.vector_epilogue() && !s.out_nc1hwc0 && std::uint64_t(s.n) * dtype_bytes(s.out) > 65535ull * 32)
    throw Error("gemm: with a bias, a scale or a residual, C's rows are at most 2 MiB (n up to " +
                std::to_string(65535ull * 32 / dtype_bytes(s.out)) + " for " + dtype_name(s.out) +
                "), got n = " + std::to_string(s.n));
}

}  // namespace

namespace {

// Two chunks of kt elements of an mt x nt tile's A and B fit L0A and L0B, and one transposing
// load moves a chunk of B (at most 255 fractals).
bool chunks_fit_l0(const AiCoreConfig& cfg, std::uint64_t mt, std::uint64_t nt, std::uint64_t kt, unsigned eb) {
  const unsigned k0 = 32 / eb;
  return 2 * mt * kt * eb <= cfg.size[kL0A] && 2 * kt * nt * eb <= cfg.size[kL0B] && (kt / k0) * (nt / 16) <= 255;
}

// A conv keeps its weights in L1 from one tile to the next of the same column where all its
// chunks fit L1's six buffers at once (GemmBuilder::b_resident). One whose k takes 7 to 12 chunks
// of 128 bytes takes chunks of 256 instead when that makes them fit and pays: a core runs two or
// more tiles of one column (blocks a multiple of the tile columns), and the tile's doubled chunks
// still fit L0A, L0B and, six of them, L1. ResNet-50's 512 -> 128 1 x 1 convs on a 28 x 28 map:
// 25.8 -> 22.9 us on ascend310; on 14 x 14 maps (one tile a core) the wider chunks only pipeline
// worse (EfficientNet-B0 2797 -> 2825 us when they were taken there too).
bool resident_with_wider_chunks(const AiCoreConfig& cfg, const GemmShape& s, const ConvShape& conv, const GemmTiling& t,
                                bool columns) {
  const unsigned eb = dtype_bytes(s.in), k0 = 32 / eb;
  const std::uint64_t k_pad = (s.k + k0 - 1) / k0 * k0, kt2 = 2ull * t.kt, b2 = kt2 * t.nt * eb;
  if (t.kt * eb != 128 || k_pad <= 6ull * t.kt || k_pad > 6 * kt2) return false;
  const std::uint64_t tiles = t.tiles(s.m, s.n), tiles_n = (s.n + t.nt - 1) / t.nt;
  const std::uint64_t blocks = std::min<std::uint64_t>(cfg.cores, tiles);
  if (blocks % tiles_n != 0 || tiles < 2 * blocks) return false;
  return chunks_fit_l0(cfg, t.mt, t.nt, kt2, eb) &&
         conv_l1(conv, t.mt, t.nt, b2, cfg.size[kL1], cfg.cores, columns).need(6, b2) <= cfg.size[kL1];
}

}  // namespace

// Cycles of the tile estimate that a tile of fewer rows, not a power of two, must save to be taken
// (gemm_tiling): the estimate leaves out a tile's and a kernel's fixed costs. ResNet-50's 56 x 56
// maps' 3136 rows then go in 14 tiles of 224 where 256 took 13 (3328 rows computed, the last wave
// half busy on two cores), its 28 x 28 maps' 784 in 7 of 112 where 128 took 7 (896), its 14 x 14
// maps' 196 in 2 of 112 where 128 took 2 (256). Measured (timing-only, docs/networks.md):
// ResNet-50 on ascend310 2883 -> 2795 us. Without the margin (tried with rows of any count,
// larger ones too) the finer tiles that saved less made ascend910's short kernels slower:
// ResNet-50 583 -> 592 us.
constexpr std::uint64_t kOddRowsMargin = 256;

GemmTiling gemm_tiling(const AiCoreConfig& cfg, const GemmShape& s, const ConvShape* conv) {
  check_gemm(s);
  const std::uint32_t k0 = 32 / dtype_bytes(s.in);
  GemmTiling t;
  // k in chunks of kt, the largest up to 64 that divides k rounded up to whole fractals: the
  // last chunk then ends in the fractal column that holds k, and ND -> Nz pads that column
  // with zeros, so the padded part of k adds nothing.
  // A conv (k a whole number of fractals) takes chunks of 64 and a shorter last one, its steps
  // on the k it has (the stem's 784 = 12 x 64 + 16: 13 chunks, not 49).
  // A chunk is at most 128 bytes of k: 64 fp16 / bf16 elements, 128 int8 (the int8 cube step
  // takes twice the k of an fp16 one, so a chunk of the same bytes has the same steps and the
  // same per-chunk overheads: with 64, int8 ran at 0.98x the fp16 throughput).
  const std::uint64_t k_pad = (s.k + k0 - 1) / k0 * k0;
  for (std::uint32_t kt : {128u, 64u, 32u, 16u})
    if (kt * dtype_bytes(s.in) <= 128 && (k_pad % kt == 0 || (conv && k_pad >= kt)) && kt % k0 == 0) {
      t.kt = kt;
      break;
    }
  const unsigned eb = dtype_bytes(s.in);
  const std::uint64_t l0a = cfg.size[kL0A], l0b = cfg.size[kL0B], l0c = cfg.size[kL0C], l1 = cfg.size[kL1];
  // The tiles that fit (L0A and L0B hold two chunks each, L0C one output tile, L1 two chunks of
  // A and of B; one transposing load moves a B chunk): the one with the least estimated time,
  // then the least padding computed, then the largest (fewest tiles).
  // Powers of two first; then rows cut to fit m (below).
  // L1: two chunks of A and of B; a conv's feature map (or two bands of it) and two of B.
  // A one-row conv's column bands only where no tile fits otherwise: a shape that ran before keeps
  // its tiles (a second search, with them). A vector epilogue's tile is admitted by what one slot
  // of it took before the residual shared the cast's place (gemm_epilogue_admits): the estimate
  // does not count the epilogue, and the larger tiles that place lets in ran slower (a conv of 512
  // outputs with a residual: 128 x 256 and one slot, 74 us, where 128 x 128 and two take 61).
  bool columns = false;
  auto l1_need = [&](std::uint32_t mt, std::uint32_t nt) {
    const std::uint64_t b = std::uint64_t(t.kt) * nt * eb;
    return conv ? conv_l1(*conv, mt, nt, b, l1, cfg.cores, columns).need(2, b)
                : 2 * (std::uint64_t(mt) * t.kt * eb + b);
  };
  auto fits = [&](std::uint32_t mt, std::uint32_t nt) {
    return chunks_fit_l0(cfg, mt, nt, t.kt, eb) && std::uint64_t(mt) * nt * 4 <= l0c && l1_need(mt, nt) <= l1 &&
           (!conv || conv->ext_groups() == 1 || conv->coute() % nt == 0) &&
           (!s.vector_epilogue() || (gemm_epilogue_admits(s, mt, nt, conv != nullptr) <= cfg.size[kUB] &&
                                     nt / gemm_parts(nt, conv != nullptr) * dtype_bytes(s.out) % 32 == 0)) &&
           (!gemm_ragged(s) || ragged_tile_fits(s, mt, nt)) && (!s.out_nc1hwc0 || nt <= s.n);
  };
  std::uint64_t best_work = ~0ull, best_pad = ~0ull, best_area = 0;
  auto search = [&] {
    for (std::uint32_t mt = 16; mt <= 256; mt *= 2)
      for (std::uint32_t nt = 16; nt <= 256; nt *= 2) {
        if (!fits(mt, nt)) continue;
        const std::uint64_t work = gemm_estimate(cfg, s, mt, nt, k_pad), area = std::uint64_t(mt) * nt;
        const std::uint64_t pad = (s.m + mt - 1) / mt * mt * ((s.n + nt - 1) / nt * nt);
        if (std::tie(work, pad) < std::tie(best_work, best_pad) ||
            (work == best_work && pad == best_pad && area > best_area))
          best_work = work, best_pad = pad, best_area = area, t.mt = mt, t.nt = nt;
      }
  };
  search();
  if (!best_area && conv) columns = true, search();
  // Then fewer rows, any whole number of fractals, where m's last tile computes less padding and
  // the estimate saves kOddRowsMargin or more. Only fewer: a larger tile leaves the epilogue
  // fewer UB slots, which the estimate does not count (a 64 -> 384 1 x 1 conv on 56 x 56,
  // tests/conv-weights-resident.py, took 224 x 128 tiles for 128 x 128 and ran 80.5 -> 108.3 us).
  // Not a grouped conv's (a depthwise conv on the cube), whose time the estimate does not follow:
  // EfficientNet-B0's depthwise convs ran 4-30 us slower with fewer rows.
  const std::uint32_t pow2_mt = t.mt;
  for (std::uint32_t mt = 16; best_area && (!conv || conv->ext_groups() == 1) && mt < pow2_mt; mt += 16) {
    const std::uint64_t work = gemm_estimate(cfg, s, mt, t.nt, k_pad) + kOddRowsMargin;
    if (work < best_work && fits(mt, t.nt)) best_work = work, t.mt = mt;  // a power of two cannot be: searched
  }
  if (best_area && conv && resident_with_wider_chunks(cfg, s, *conv, t, columns)) t.kt *= 2;
  if (!best_area)
    throw Error("gemm: no tile of 16..256 fits L0A (" + std::to_string(l0a) + " B), L0B (" + std::to_string(l0b) +
                " B), L0C (" + std::to_string(l0c) + " B) and L1" +
                (conv
                     ? " (with the feature map's band of " +
                           band_words(*conv, conv_l1(*conv, 16, 16, std::uint64_t(t.kt) * 16 * eb, l1, cfg.cores)) + ")"
                     : std::string()) +
                (s.vector_epilogue() ? " (and, with the epilogue, UB (" + std::to_string(cfg.size[kUB]) + " B))"
                                     : std::string()));
  return t;
}

namespace {

// One action of the per-tile program. It holds only what is the same every time it runs
// (buffer numbers, event ids, flags): equal actions emit equal instructions, so a run of
// repeating actions can become a scalar loop.
struct Act {
  enum Kind : std::uint8_t { Load, NextTile, NextLoad, Step } kind = Step;
  int buf = 0;                               // L1 buffer
  int l0 = 0, part = 0;                      // Step: L0A / L0B buffer; L0C part
  bool first_use = false, last_use = false;  // Step: the chunk's first and last step
  bool first = false, last = false;          // Step: the tile's first and last step into this part
  int kdelta = 0;                            // Step (conv): chunks to move the img2col window by first
  bool tail = false;                         // Load, NextLoad: the last chunk, shorter than the others
  bool operator==(const Act& o) const {
    return std::tie(kind, buf, l0, part, first_use, last_use, first, last, kdelta, tail) ==
           std::tie(o.kind, o.buf, o.l0, o.part, o.first_use, o.last_use, o.first, o.last, o.kdelta, o.tail);
  }
};

// The program of one output tile: `chunks` k chunks, chunk c in L1 buffer c % nb; the tile's
// L0C in `parts` parts along n. The cube takes chunks in groups of `group`: all of a group's
// steps into part 0, then into part 1, ... so the last part's final steps still run while
// FixPipe drains the first part, and the next tile's first steps while it drains the last:
// FixPipe overlaps the cube instead of stopping it. Loads are emitted in chunk order, each
// after the step that frees its buffer; the last buffers freed take the next tile's first
// chunks, so a tile starts with nb chunks loaded. (Running a block's first group chunk by
// chunk instead, as it has nothing to overlap, was tried: the lead of `group` chunks that the
// skew needs is then built up at the second group, for the same total.)
// `tail`: the last chunk is shorter (k is not a multiple of the chunk), so its loads differ.
std::vector<Act> tile_program(std::uint32_t chunks, int nb, std::uint32_t group, int parts, bool tail) {
  struct Pending {
    bool next_tile;
    std::uint32_t chunk;
    long after;  // the chunk (of this tile) whose last step frees the way; -1: none
  };
  std::vector<Pending> loads;
  for (std::uint32_t c = nb; c < chunks; ++c) loads.push_back({false, c, long(c) - nb});
  for (std::uint32_t c = 0; c < std::min<std::uint32_t>(nb, chunks); ++c) {
    long prev = -1;  // the last chunk of this tile in the same buffer
    for (std::uint32_t p = c; p < chunks; p += nb) prev = long(p);
    loads.push_back({true, c, prev});
  }
  std::vector<bool> released(chunks, false);
  std::size_t next_load = 0;
  std::vector<Act> acts;
  int step = 0;
  std::uint32_t k_at = 0;
  auto add_step = [&](std::uint32_t c, int h) {
    Act a;
    a.buf = int(c % nb);
    a.l0 = step++ % 2;
    a.part = h;
    a.first_use = h == 0;
    a.last_use = h == parts - 1;
    a.first = c == 0;
    a.last = c == chunks - 1;
    a.kdelta = int(c) - int(k_at);
    k_at = c;
    acts.push_back(a);
    if (!a.last_use) return;
    released[c] = true;
    for (; next_load < loads.size(); ++next_load) {
      const Pending& l = loads[next_load];
      if (l.after >= 0 && !released[l.after]) break;
      if (l.next_tile && l.chunk == 0) acts.push_back(Act{Act::NextTile});
      Act load{l.next_tile ? Act::NextLoad : Act::Load, int(l.chunk % nb)};
      load.tail = tail && l.chunk == chunks - 1;
      acts.push_back(load);
    }
  };
  for (std::uint32_t g0 = 0; g0 < chunks; g0 += group) {
    const std::uint32_t g1 = std::min(chunks, g0 + group);
    for (int h = 0; h < parts; ++h)
      for (std::uint32_t c = g0; c < g1; ++c) add_step(c, h);
  }
  return acts;
}

// Emits `acts`, with the longest run of a repeating block as a loop: prefix, count x period,
// suffix (the choice that emits the fewest actions).
template <typename Emit, typename Loop>
void emit_compressed(const std::vector<Act>& acts, Emit emit, Loop loop) {
  const std::size_t n = acts.size();
  std::size_t best_len = n, best_s = 0, best_p = 0, best_k = 0;
  for (std::size_t p = 1; p <= n / 2; ++p)
    for (std::size_t s0 = 0; s0 + 2 * p <= n; ++s0) {
      std::size_t run = 0;  // acts[i] == acts[i + p] for i in [s0, s0 + run)
      while (s0 + run + p < n && acts[s0 + run] == acts[s0 + run + p]) ++run;
      const std::size_t reps = run / p + 1;
      if (reps < 2) continue;
      const std::size_t len = n - (reps - 1) * p;
      if (len < best_len) best_len = len, best_s = s0, best_p = p, best_k = reps;
    }
  if (!best_p) {
    for (const Act& a : acts) emit(a);
    return;
  }
  for (std::size_t i = 0; i < best_s; ++i) emit(acts[i]);
  loop(best_k, [&] {
    for (std::size_t i = best_s; i < best_s + best_p; ++i) emit(acts[i]);
  });
  for (std::size_t i = best_s + best_k * best_p; i < n; ++i) emit(acts[i]);
}

// Builds the GEMM (or a convolution run as one): the plan of buffers first, then the code, in
// named pieces: the prologue, the loads (MTE2), the steps (MTE1 and the cube), the output
// (FixPipe, or the bias epilogue on the vector unit) and the loop over tiles.
class GemmBuilder {
 public:
  GemmBuilder(const AiCoreConfig& cfg, const GemmShape& shape, const ConvShape* conv)
      : cfg_(cfg), s(shape), conv(conv), t(gemm_tiling(cfg, shape, conv)) {
    plan();
  }
  Image build();

 private:
  void plan();
  void plan_l1();
  void prologue();
  void load_feature_map();
  std::uint32_t first_planes() const;
  void load_rest_planes();
  void band(Reg top, Reg rows, Reg pad_t, Reg pad_b, Reg r0);
  void col_band(Reg left, Reg cols, Reg pad_l, Reg pad_r);
  void clip_band(Reg a, Reg b, Reg lo, Reg hi, std::uint32_t pad, std::uint32_t size);
  void load_band(Reg tr, std::uint32_t planes = 0);
  void load_band_planes();
  // A band's planes are more than a copy's 16-bit gap apart: load_band copies them one by one.
  bool band_planes_apart() const {
    return conv->c0 == 16 && conv->c1e() > 1 && std::uint64_t(conv->h) * conv->w > 65535;
  }
  void band_window();
  template <typename F>
  void by_parity(Reg par, F f);
  void row_col(Reg tr);
  void load_pointers(Reg tr);
  void group_planes(Reg out, Reg base);
  void col_start(Reg out, std::int64_t unit);
  void valid_cols(Reg out);
  void load(int b, bool tail, bool next = false);
  void load_b(int b, bool tail);
  void edge_configs();
  DataCopyCfg fractal_b(std::uint32_t frows, std::uint32_t rows) const;
  void fractal_b_cfg(Reg out, std::uint32_t frows);
  void output_configs();
  void valid(Reg out, Reg index, std::uint32_t tile, std::uint32_t size);
  void epilogue(int h, Reg l0c_addr);
  void epilogue_in(int h, int u, Reg l0c_addr);
  void block_at(Reg out, Reg base, int h, std::uint32_t j);
  void fixpipe_blocks(int h);
  void copy_out_blocks(int h, std::uint64_t ub);
  void load_residual_blocks(int h, std::uint64_t ub);
  void ragged_out(int h);
  void narrow_out(int h);
  void narrow_rows();
  void epilogue_vector(std::uint64_t slot, int u, int h);
  void epilogue_rows(std::uint64_t slot, int u, std::uint32_t r0, std::uint32_t n, std::uint32_t j, int h);
  void epilogue_rows_half(std::uint64_t slot, int u, std::uint32_t r0, std::uint32_t n, std::uint32_t j, int h);
  void rows_to_half(int u);
  std::uint32_t seg_elems() const { return half ? 128 : 64; }  // a vector repeat of the epilogue's type
  void load_residual(int h, int u, std::uint64_t slot);
  void res_slot_flag(bool set, int u);
  // Slot u's bias and scale rows (one set but with alt_slots), and their V <-> MTE2 flags' event.
  std::uint64_t rows_at(int u) const { return ub_rows + (alt_slots() ? std::uint64_t(u) * rows_bytes : 0); }
  int rows_event(int u) const { return alt_slots() ? 3 + u : 0; }
  void load_rows_in(int u);
  void load_residual_rows(int h);
  void load_rows();
  void step(const Act& a);
  void step_mte1(const Act& a);
  void step_cube(const Act& a);
  void l0c_at(Reg out, int h);
  void part_flag(Pipe from, Pipe to, bool set, int h);
  void fix_m(bool set, int h) { part_flag(Pipe::FIX, Pipe::M, set, h); }  // FixPipe has read the part
  // A conv's last chunk when it is shorter than the others: its steps take only its k_tail.
  bool short_k(const Act& a) const { return conv && a.last && k_tail_f != t.kt; }
  void emit(const Act& a);
  void run_tile(const std::vector<Act>& program);
  void tile_pointers();
  void final_flags();

  const AiCoreConfig& cfg_;
  const GemmShape& s;
  const ConvShape* conv;
  const GemmTiling t;
  // The plan.
  DType in = DType::F16, acc = DType::F32;
  unsigned eb = 2, ob = 4;
  std::uint32_t n16 = 0;  // B^T's rows in whole fractals (fractal_z: a fractal row's rows)
  std::uint32_t k0 = 16, mf = 0, nf = 0, kf = 0, chunks = 0, tiles_n = 0, tiles_m = 0, tiles = 0, nfp = 0, ntp = 0,
                group = 0, group_m = 1;
  int parts = 1, nb = 8, nu = 1;
  // L0C buffers: two when a tile takes at most half of L0C, so FixPipe drains one tile while
  // the cube computes the next into the other; lc holds this tile's (0 or l0c_tile).
  int l0c_bufs = 1;
  std::uint64_t l0c_tile = 0;
  std::uint64_t a_bytes = 0, b_bytes = 0;
  ConvL1 fm;  // a conv's feature map in L1: whole, or two band slots at 0 and fm.area
  bool banded = false;
  bool grouped = false;  // a conv of several extended groups: each tile's input channels differ
  // A conv whose chunks all fit L1's buffers at once (chunk c in buffer c): B stays there from
  // one tile to the next of the same column, and the next tile's loads copy only when its
  // column differs. Its tiles go row by row (group_m 1), so a core's next tile, dim tiles on,
  // is in the same column exactly when dim is a multiple of tiles_n: the same for every tile.
  bool b_resident = false;
  std::uint64_t l1a[8] = {}, l1b[8] = {}, l0a[2] = {}, l0b[2] = {};
  bool epi = false;    // the vector epilogue (bias, scale, residual, ReLU6) instead of FixPipe to GM
  bool rows = false;   // it reads per-column rows (bias, scale)
  bool cast = false;   // the epilogue casts to C's type (C is not 4 bytes)
  bool quant = false;  // int8 requantization: s32 sums x scale into C's type
  bool half = false;   // the epilogue in f16 (GemmShape::f16_epilogue): FixPipe casts, no cast after
  // Edges: m, n or k not a multiple of the tile. Edge tiles load what exists (ND -> Nz pads
  // with zeros), compute the whole tile and write what exists, by configuration words made at
  // run time for each tile.
  bool edge_m = false, edge_n = false;
  std::uint32_t k_tail = 0;    // elements of k in the last chunk
  std::uint32_t k_tail_f = 0;  // and in whole fractal columns: a conv's last steps
  // UB: nu slots of slot_bytes (the accumulator; its cast at cast_off, where the residual is
  // loaded too: res_off), then the residual's f32 scratch at ub_resf, the bias row and the scale
  // row at ub_rows (a set of them per slot with alt_slots: rows_at).
  std::uint64_t slot_acc = 0, slot_bytes = 0, ub_resf = 0, ub_rows = 0, rows_bytes = 0, cast_off = 0, res_off = 0;
  // half: the rows in f16, after the f32 ones as loaded (a set per slot with alt_slots).
  std::uint64_t ub_rows16 = 0, rows16_bytes = 0;
  std::uint64_t rows16_at(int u) const { return ub_rows16 + (alt_slots() ? std::uint64_t(u) * rows16_bytes : 0); }
  // C's rows end inside 32-byte blocks: written row by row (ragged_out); rows narrower than a tile
  // assemble a tile's last blocks at ub_tail (narrow_out).
  bool ragged = false;
  std::uint64_t ub_tail = 0;
  // Ragged rows of a block or more: the last column tile starts at n - nt, not at a multiple of
  // nt, so it is whole too (its first columns are the previous tile's again: the same values,
  // each an independent dot product, written twice). No tile then has a row ending inside a
  // block that another tile's row continues.
  bool shift_n = false;
  // The code.
  KernelBuilder k;
  Reg zero = KernelBuilder::zero();
  Reg arg, A, B, C, bias, cscale, R, tile, dim, ntiles, ld_tile, a_ptr, b_ptr, c_ptr, tmp, dst, src;
  Reg row, col, count, kstart, window, wbase;
  Reg scale;                                     // with quant: the scale's f32 bits; otherwise zero
  Reg a_cfg, a_tail, b_cfg, b_tail, out_cfg[2];  // with edges: this tile's configuration words
  // Banded conv: the band slot the load side fills next and the one the compute side reads
  // (0 or 1), that slot's L1 address, and two more temporaries for the band's arithmetic.
  Reg ld_par, par, band_l1, bt0, bt1;
  Reg lc;  // with two L0C buffers: this tile's
  // With two UB slots, one L0C part a tile (a conv's) and two L0C buffers, the slots alternate
  // from tile to tile as the L0C buffers do, so one tile's epilogue (vector, MTE3, the next
  // residual's MTE2) overlaps the next tile's work: lc (0 or l0c_tile) tells the tile's slot.
  bool alt_slots() const { return epi && parts == 1 && nu == 2 && l0c_bufs == 2; }
  Load3dCfg filter;
};

void GemmBuilder::plan() {
  in = s.in;
  acc = in == DType::S8 ? DType::S32 : DType::F32;
  eb = dtype_bytes(in);
  k0 = 32 / eb;
  mf = t.mt / 16, nf = t.nt / 16, kf = t.kt / k0;
  n16 = (s.n + 15) / 16 * 16;
  chunks = (s.k + t.kt - 1) / t.kt;
  k_tail = s.k - (chunks - 1) * t.kt;
  k_tail_f = (k_tail + k0 - 1) / k0 * k0;
  // An NC1HWC0 C is written a column block at a time: whole tiles (shift_n) keep each part's
  // blocks whole, so only the rows vary.
  shift_n = ((gemm_ragged(s) && !gemm_narrow(s)) || s.out_nc1hwc0) && s.n % t.nt != 0;
  edge_m = s.m % t.mt != 0, edge_n = s.n % t.nt != 0 && !shift_n;
  tiles_n = (s.n + t.nt - 1) / t.nt, tiles_m = (s.m + t.mt - 1) / t.mt, tiles = std::uint32_t(t.tiles(s.m, s.n));
  // Rows per tile group: as many A row panels as fit in half the L2 beside two B column
  // panels; the other half holds the B panels in flight and the C tiles streaming through (a
  // conv's A is its feature map: row order). 2048^3 fp16 on ascend310: row order 59.9% of
  // peak, groups of 2 rows (half the L2) 84.1%, of 4 (three quarters) 75.0%.
  const std::uint64_t a_panel = std::uint64_t(t.mt) * s.k * eb, b_panel = std::uint64_t(t.nt) * s.k * eb;
  const std::uint64_t budget = cfg_.l2_bytes / 2;
  group_m = conv || budget <= 2 * b_panel
                ? 1
                : std::uint32_t(std::min<std::uint64_t>(tiles_m, (budget - 2 * b_panel) / a_panel));
  group_m = std::max<std::uint32_t>(group_m, 1);
  ob = dtype_bytes(s.out);
  // L0C in two parts along n when the tile has an even number of fractal columns, so FixPipe
  // overlaps the cube. Each part's steps load A again: cheap for a GEMM (load2d at 512 B per
  // cycle), not for a conv, whose img2col costs more than the overlap saves (11.7% of peak on
  // scenarios/kernels/conv2d.yaml with one part, 7.3% with two).
  parts = gemm_parts(t.nt, conv != nullptr);
  l0c_tile = std::uint64_t(t.mt) * t.nt * 4;
  l0c_bufs = 2 * l0c_tile <= cfg_.size[kL0C] ? 2 : 1;
  nfp = nf / parts, ntp = t.nt / parts;
  plan_l1();
  l0a[1] = a_bytes, l0b[1] = b_bytes / parts;
  // The vector epilogue in UB: nu slots (two when they fit: part 1's FixPipe need not wait for
  // part 0's MTE3; with one part, tiles take them in turn: alt_slots) of the accumulator tile, its
  // cast and the residual, then the residual's scratch and the rows.
  epi = s.vector_epilogue(), rows = s.bias || s.channel_scale;
  half = s.half_epilogue();
  cast = !half && s.out != DType::F32 && s.out != DType::S32;
  quant = acc == DType::S32 && s.out != DType::S32;
  const std::uint64_t part = std::uint64_t(t.mt) * ntp;
  slot_acc = part * (half ? 2 : 4), cast_off = slot_acc;
  res_off = cast_off;  // the residual's place: the cast's, or (no cast) its own there
  slot_bytes = cast_off + (cast || s.residual ? part * ob : 0);
  nu = epi && gemm_epilogue_ub(s, t.mt, t.nt, conv != nullptr, 2) <= cfg_.size[kUB] ? 2 : 1;
  ub_resf = nu * slot_bytes;
  ub_rows = ub_resf + (half ? 0 : gemm_residual_scratch(s, t.mt, ntp));
  rows_bytes = (int(s.bias) + int(s.channel_scale)) * std::uint64_t(t.nt) * 4;
  rows16_bytes = half ? rows_bytes / 2 : 0;
  ub_rows16 = ub_rows + (alt_slots() ? 2 : 1) * rows_bytes;
  ub_tail = ub_rows16 + (alt_slots() ? 2 : 1) * rows16_bytes;
  ragged = gemm_ragged(s);
}

void GemmBuilder::plan_l1() {
  // L1 holds nb chunks: as many as fit up to eight (event ids 0..7; a conv keeps 6 and 7 for
  // its feature map or bands), so MTE2 runs a group or more ahead of the cube. L0A / L0B hold
  // two steps. A conv keeps its feature map (or two bands of it) in L1 instead of A chunks.
  a_bytes = std::uint64_t(t.mt) * t.kt * eb, b_bytes = std::uint64_t(t.kt) * t.nt * eb;
  if (conv) fm = conv_l1(*conv, t.mt, t.nt, b_bytes, cfg_.size[kL1], cfg_.cores);
  banded = conv && !fm.whole;
  grouped = conv && conv->ext_groups() > 1;
  auto l1_need = [&](int n) { return conv ? fm.need(n, b_bytes) : n * (a_bytes + b_bytes); };
  nb = conv ? 6 : 8;
  while (nb > 2 && l1_need(nb) > cfg_.size[kL1]) nb -= 2;
  if (l1_need(nb) > cfg_.size[kL1]) throw Error("gemm: two chunks of A and B do not fit L1");  // the tiling saw to it
  group = std::uint32_t(nb / 2);
  b_resident = conv && chunks <= std::uint32_t(nb) && group_m == 1;
  const std::uint64_t b_at = conv ? (banded ? 2 * fm.area : fm.area) : nb * a_bytes;
  for (int b = 0; b < nb; ++b) {
    l1a[b] = std::uint64_t(b) * a_bytes;
    l1b[b] = b_at + std::uint64_t(b) * b_bytes;
  }
}

Image GemmBuilder::build() {
  arg = k.reg(), A = k.reg(), B = k.reg(), C = k.reg();
  bias = s.bias ? k.reg() : zero, cscale = s.channel_scale ? k.reg() : zero, R = s.residual ? k.reg() : zero;
  k.GetSpr(arg, Spr::ArgBase);
  k.LoadGm(A, arg, 0);
  k.LoadGm(B, arg, 8);
  k.LoadGm(C, arg, 16);
  std::int32_t at = 24;  // then bias, scale and residual, those the shape has
  for (Reg r : {bias, cscale, R})
    if (r.n != zero.n) k.LoadGm(r, arg, at), at += 8;
  scale = zero;
  if (quant) {
    std::uint32_t bits;
    std::memcpy(&bits, &s.scale, 4);
    scale = k.Const(bits);
  }
  tile = k.reg(), dim = k.reg(), ntiles = k.Const(tiles);
  k.GetSpr(tile, Spr::BlockId);
  k.GetSpr(dim, Spr::BlockDim);
  // Loads run ahead into the next tile: ld_tile, a_ptr and b_ptr are the load side's; tile,
  // c_ptr, window and kstart the compute side's.
  ld_tile = k.reg(), a_ptr = conv ? zero : k.reg(), b_ptr = k.reg(), c_ptr = k.reg(), tmp = k.reg(), dst = k.reg(),
  src = k.reg();
  // window is made just before each load3d, from which src is free.
  row = k.reg(), col = k.reg(), count = k.reg(), kstart = k.reg(), window = src, wbase = k.reg();
  // A's words vary only with its rows (edge_m), B's only with its columns (edge_n).
  if (edge_m && !conv) a_cfg = k.reg(), a_tail = k.reg();
  if (edge_n) b_cfg = k.reg(), b_tail = k.reg();
  if (edge_m || edge_n)
    for (int h = 0; h < parts; ++h) out_cfg[h] = k.reg();
  // arg is free once the arguments are read.
  if (l0c_bufs == 2) lc = k.Const(0);
  if (banded) ld_par = k.Const(0), par = k.Const(0), band_l1 = k.reg(), bt0 = arg, bt1 = k.reg();
  if (grouped && !banded) band_l1 = k.reg();  // the tile's extended group's planes in L1
  if (conv)
    filter =
        Load3dCfg{conv->kh, conv->kw, conv->stride_h, conv->stride_w, conv->dil_h, conv->dil_w, conv->c1e() * conv->c0};
  if (conv) load_feature_map();
  prologue();
  // The first tile's first chunks; then output tiles round-robin over the blocks: tile,
  // tile + blockdim, ...
  Label no_tiles = k.NewLabel();
  k.Branch("bgeu", tile, ntiles, no_tiles);
  load_pointers(tile);
  if (banded) load_band(tile, first_planes());  // slot 0 (ld_par starts at 0)
  for (std::uint32_t c = 0; c < std::min<std::uint32_t>(nb, chunks); ++c) load(int(c), c == chunks - 1);
  if (first_planes()) load_rest_planes();  // the loads keep bt0 and bt1, the band's GM plane and copy word
  k.Bind(no_tiles);
  const std::vector<Act> program = tile_program(chunks, nb, group, parts, k_tail != t.kt);
  k.RoundRobin(tile, ntiles, dim, [&] { run_tile(program); });
  final_flags();
  k.End();
  return k.Build();
}

void GemmBuilder::load_feature_map() {
  k.SetSpr(Spr::PadValue, zero);
  if (banded) return;  // each tile sets fmatrix to its band
  // The feature map goes into L1 once, a C1 plane per block; MTE1 waits for it before its
  // first img2col.
  k.Li(tmp, std::int64_t(Fmatrix{conv->w, conv->h, conv->pad_l, conv->pad_r, conv->pad_t, conv->pad_b}.pack()));
  k.SetSpr(Spr::Fmatrix, tmp);
  k.Li(dst, 0);
  const std::uint32_t plane = (conv->h * conv->w * conv->c0 * 2 + 31) / 32;  // blocks of a C1 plane
  const std::uint32_t planes = first_planes() ? first_planes() : conv->c1();
  k.DataCopy(Pos::L1, dst, Pos::GM, A, DataCopyCfg{planes, plane, 0, 0});
  k.SetFlag(Pipe::MTE2, Pipe::MTE1, 7);  // event 7: the L1 buffers use 0..nb-1
  k.WaitFlag(Pipe::MTE2, Pipe::MTE1, 7);
}

// A 1 x 1 conv's k is its channels, so its chunk c reads only C1 planes c x kt / 16 onwards. Its
// first tile's feature map (whole, or the band) goes into L1 in two copies: the planes of the
// first nb chunks, before their weights, and the rest after them. The cube starts on the first
// planes, and a weight-streaming conv's DRAM reads start a whole map's copy earlier (MTE2 takes
// its copies one after another; ResNet-50's stage 3 and 4 read maps of 200 KB or more from
// the L2 first). Chunk nb's MTE1 waits for its weights' flag, which MTE2 sets only once
// every copy before it is done, the rest planes too. 0: one copy (another conv, or k in nb
// chunks or fewer).
std::uint32_t GemmBuilder::first_planes() const {
  if (!conv || conv->kh != 1 || conv->kw != 1 || grouped || conv->c0 != 16 || fm.columns || chunks <= std::uint32_t(nb))
    return 0;
  if (banded && band_planes_apart()) return 0;  // a copy per plane already
  return std::uint32_t(nb) * t.kt / 16;
}

// The first tile's planes past first_planes(): the whole map's (L1 plane after plane), or the
// band's into slot 0 (bt0 and bt1 still hold the band's first plane in GM and its copy word).
void GemmBuilder::load_rest_planes() {
  const ConvShape& c = *conv;
  const std::uint32_t p1 = first_planes(), plane_bytes = c.h * c.w * 32;
  k.Li(tmp, std::int64_t(p1) * plane_bytes);
  if (!banded) {
    k.Op("or", dst, tmp, zero);
    k.Add(src, A, tmp);
    k.Li(tmp, std::int64_t(DataCopyCfg{c.c1() - p1, plane_bytes / 32, 0, 0}.pack()));
    k.DataCopy(Pos::L1, dst, Pos::GM, src, tmp);
    return;
  }
  k.Add(src, bt0, tmp);
  k.OpI("shli", dst, bt1, 36);  // block_len (bits 27:12): the band's bytes of a plane / 32
  k.OpI("shri", dst, dst, 48);
  k.Li(tmp, std::int64_t(p1) * 32);
  k.Mul(dst, dst, tmp);  // slot 0, plane p1
  k.OpI("shri", tmp, bt1, 12);
  k.OpI("shli", tmp, tmp, 12);
  k.Addi(tmp, tmp, std::int32_t(c.c1e() - p1));  // the other planes, the same gaps
  k.DataCopy(Pos::L1, dst, Pos::GM, src, tmp);
}

// Emits f(0) when p is 0, else f(1): a band slot's event and address are immediates.
template <typename F>
void GemmBuilder::by_parity(Reg p, F f) {
  Label one = k.NewLabel(), done = k.NewLabel();
  k.Branch("bne", p, zero, one);
  f(0);
  k.Jump(done);
  k.Bind(one);
  f(1);
  k.Bind(done);
}

// The band of the tile in row `row` of the grid, as conv_band computes it: its first input row
// `top`, its `rows`, the padding above and below it, and r0 (its first output row). Uses tmp.
void GemmBuilder::band(Reg top, Reg rows, Reg pad_t, Reg pad_b, Reg r0) {
  const ConvShape& c = *conv;
  if (fm.columns) return col_band(top, rows, pad_t, pad_b);
  k.Li(tmp, t.mt);
  k.Mul(r0, row, tmp);  // m0
  k.Addi(rows, r0, std::int32_t(t.mt - 1));
  k.Li(tmp, c.wo());
  k.Op("divu", r0, r0, tmp);  // r0 = m0 / wo
  k.Op("divu", rows, rows, tmp);
  k.Li(tmp, c.ho() - 1);
  k.Op("min", rows, rows, tmp);  // rl, the last output row
  k.Li(tmp, c.stride_h);
  k.Mul(rows, rows, tmp);
  k.Addi(rows, rows, std::int32_t(c.dil_h * (c.kh - 1) + 1));  // b = rl x stride + extent
  k.Mul(top, r0, tmp);                                         // a = r0 x stride
  clip_band(top, rows, pad_t, pad_b, c.pad_t, c.h);
}

// band() of a one-row map's column band, as conv_col_band computes it: its first input column
// `left`, its `cols`, the padding left and right of it. Uses tmp.
void GemmBuilder::col_band(Reg left, Reg cols, Reg pad_l, Reg pad_r) {
  const ConvShape& c = *conv;
  k.Li(tmp, t.mt);
  k.Mul(left, row, tmp);  // m0
  k.Addi(cols, left, std::int32_t(t.mt - 1));
  k.Li(tmp, c.wo() - 1);
  k.Op("min", cols, cols, tmp);  // the last output position
  k.Li(tmp, c.stride_w);
  k.Mul(cols, cols, tmp);
  k.Addi(cols, cols, std::int32_t(c.dil_w * (c.kw - 1) + 1));  // b = last x stride + extent
  k.Mul(left, left, tmp);                                      // a = m0 x stride
  clip_band(left, cols, pad_l, pad_r, c.pad_l, c.w);
}

// [a, b) of the padded map's rows (or columns), `pad` before its `size`, as the band of the map
// it reads: a becomes its first row, b its rows, lo and hi the padding before and after it.
void GemmBuilder::clip_band(Reg a, Reg b, Reg lo, Reg hi, std::uint32_t pad, std::uint32_t size) {
  k.Li(tmp, pad);
  k.Op("max", lo, a, tmp);
  k.Op("sub", hi, lo, a);   // the padding before: max(a, pad) - a
  k.Op("sub", a, lo, tmp);  // the first: max(a, pad) - pad
  k.Op("or", lo, hi, zero);
  k.Li(tmp, std::int64_t(size) + pad);
  k.Op("min", tmp, b, tmp);  // min(b, size + pad)
  k.Op("sub", hi, b, tmp);   // the padding after: b - min(b, size + pad)
  k.Op("sub", b, tmp, a);
  k.Addi(b, b, -std::int32_t(pad));  // rows = min(b, size + pad) - pad - first
}

// MTE2: the band of the load side's tile (row) into the next band slot, each C1 group's rows
// [top, top + rows) one block per position.
void GemmBuilder::load_band(Reg tr, std::uint32_t planes) {
  const ConvShape& c = *conv;
  band(bt0, bt1, dst, src, col);
  if (grouped) {  // the planes of tile tr's extended group (band() took col: make it again)
    row_col(tr);
    group_planes(col, A);
  }
  const std::uint32_t w = fm.columns ? 1 : c.w;  // positions per band row (a column band: 1 x cols)
  k.Li(tmp, std::int64_t(w) * c.c0 * 2);
  k.Mul(bt0, bt0, tmp);
  k.Add(bt0, bt0, grouped ? col : A);  // x (its extended group's planes) + top x w x C0 x 2
  if (band_planes_apart()) return load_band_planes();
  if (c.c0 == 16) {
    k.Li(tmp, w);
    k.Mul(dst, bt1, tmp);  // block_len: rows x w
    if (c.c1e() == 1) {
      k.Li(src, 0);  // one plane: no gap (which may be past the field)
    } else {
      k.Li(src, std::int64_t(c.h) * c.w / w);
      k.Op("sub", src, src, bt1);
      k.Mul(src, src, tmp);  // src_gap: (h - rows) x w (a column band: w - cols)
    }
  } else {  // one plane of C0 = 4: rows x w x 8 bytes, in whole blocks
    k.Mul(dst, bt1, tmp);
    k.Addi(dst, dst, 31);
    k.OpI("shri", dst, dst, 5);
    k.Li(src, 0);
  }
  k.OpI("shli", dst, dst, 12);
  k.OpI("shli", src, src, 28);
  k.Op("or", dst, dst, src);
  k.Li(tmp, std::int64_t(DataCopyCfg{planes ? planes : c.c1e(), 0, 0, 0}.pack()));
  k.Op("or", bt1, dst, tmp);
  by_parity(ld_par, [&](int p) {
    k.WaitFlag(Pipe::MTE1, Pipe::MTE2, 6 + p);
    k.Li(dst, std::int64_t(p * fm.area));
    k.DataCopy(Pos::L1, dst, Pos::GM, bt0, bt1);
    k.SetFlag(Pipe::MTE2, Pipe::MTE1, 6 + p);
  });
  k.OpI("xori", ld_par, ld_par, 1);
}

// load_band for planes of more than 65535 positions, whose gap between one plane's band and
// the next is more than a copy's 16-bit gap field reaches: a copy per C1 plane, its band's rows
// (bt0: the first plane's, bt1: the rows).
void GemmBuilder::load_band_planes() {
  const ConvShape& c = *conv;
  k.Li(tmp, fm.columns ? 1 : c.w);
  k.Mul(dst, bt1, tmp);        // block_len: rows x w
  k.OpI("shli", src, dst, 5);  // a plane's bytes in the band slot
  k.OpI("shli", dst, dst, 12);
  k.OpI("ori", bt1, dst, 1);  // one block of them
  by_parity(ld_par, [&](int p) {
    k.WaitFlag(Pipe::MTE1, Pipe::MTE2, 6 + p);
    k.Li(dst, std::int64_t(p * fm.area));
    k.Li(col, c.c1e());
    k.Loop(col, [&] {
      k.DataCopy(Pos::L1, dst, Pos::GM, bt0, bt1);
      k.Add(dst, dst, src);
      k.Li(tmp, std::int64_t(c.h) * c.w * 32);
      k.Add(bt0, bt0, tmp);
    });
    k.SetFlag(Pipe::MTE2, Pipe::MTE1, 6 + p);
  });
  k.OpI("xori", ld_par, ld_par, 1);
}

// Compute side: fmatrix for this tile's band, the img2col window's m_start, and the band slot
// (waiting for its load).
void GemmBuilder::band_window() {
  const ConvShape& c = *conv;
  band(bt0, bt1, dst, src, col);
  const bool cols = fm.columns;  // the band's extent and pads are fmatrix's w and pad_l / pad_r
  if (!cols) k.OpI("shli", bt1, bt1, 16);
  k.OpI("shli", dst, dst, cols ? 32 : 48);
  k.OpI("shli", src, src, cols ? 40 : 56);
  k.Op("or", bt1, bt1, dst);
  k.Op("or", bt1, bt1, src);
  k.Li(tmp, std::int64_t(cols ? Fmatrix{0, 1, 0, 0, 0, 0}.pack() : Fmatrix{c.w, 0, c.pad_l, c.pad_r, 0, 0}.pack()));
  k.Op("or", bt1, bt1, tmp);
  k.SetSpr(Spr::Fmatrix, bt1);
  if (cols) {
    k.Li(wbase, 0);  // m_start: the tile's first output is its band's first
  } else {           // m_start = row x mt - r0 x wo
    k.Li(tmp, t.mt);
    k.Mul(wbase, row, tmp);
    k.Li(tmp, c.wo());
    k.Mul(tmp, col, tmp);
    k.Op("sub", wbase, wbase, tmp);
  }
  by_parity(par, [&](int p) {
    k.WaitFlag(Pipe::MTE2, Pipe::MTE1, 6 + p);
    k.Li(band_l1, std::int64_t(p * fm.area));
  });
}

void GemmBuilder::prologue() {
  // Every buffer starts free.
  for (int b = 0; b < nb; ++b) k.SetFlag(Pipe::MTE1, Pipe::MTE2, b);  // L1 buffer b
  for (int b = 0; b < 2; ++b) k.SetFlag(Pipe::M, Pipe::MTE1, b);      // L0A / L0B buffer b
  for (int b = 0; b < l0c_bufs; ++b)
    for (int h = 0; h < parts; ++h) k.SetFlag(Pipe::FIX, Pipe::M, h + 2 * b);           // L0C buffer b's part h
  for (int p = 0; p < (banded ? 2 : 0); ++p) k.SetFlag(Pipe::MTE1, Pipe::MTE2, 6 + p);  // band slot p
  if (!epi) return;
  for (int u = 0; u < nu; ++u) k.SetFlag(Pipe::MTE3, Pipe::FIX, u);  // UB slot u
  for (int u = 0; u < (rows ? (alt_slots() ? 2 : 1) : 0); ++u) k.SetFlag(Pipe::V, Pipe::MTE2, rows_event(u));  // rows
  for (int u = 0; u < (s.residual ? nu : 0); ++u) res_slot_flag(true, u);  // slot u's residual
  if (ragged) k.SetFlag(Pipe::MTE3, Pipe::S, 0);                           // ub_tail
  // The epilogue's vector ops take one row segment of a part (up to 64 f32 or 128 f16 elements)
  // per repeat.
  if (ntp < seg_elems()) {
    k.Li(tmp, ntp);
    k.SetMaskCount(tmp);
  }
}

void GemmBuilder::final_flags() {
  // Take back the free flags so every flag is clear when the block ends.
  for (int b = 0; b < nb; ++b) k.WaitFlag(Pipe::MTE1, Pipe::MTE2, b);
  for (int b = 0; b < 2; ++b) k.WaitFlag(Pipe::M, Pipe::MTE1, b);
  for (int b = 0; b < l0c_bufs; ++b)
    for (int h = 0; h < parts; ++h) k.WaitFlag(Pipe::FIX, Pipe::M, h + 2 * b);
  for (int p = 0; p < (banded ? 2 : 0); ++p) k.WaitFlag(Pipe::MTE1, Pipe::MTE2, 6 + p);
  if (epi) {
    for (int u = 0; u < nu; ++u) k.WaitFlag(Pipe::MTE3, Pipe::FIX, u);
    for (int u = 0; u < (rows ? (alt_slots() ? 2 : 1) : 0); ++u) k.WaitFlag(Pipe::V, Pipe::MTE2, rows_event(u));
    for (int u = 0; u < (s.residual ? nu : 0); ++u) res_slot_flag(false, u);
    if (ragged) k.WaitFlag(Pipe::MTE3, Pipe::S, 0);
  }
}

// (row, col) of tile `tr` in the tiles_n-wide grid.
// Tiles go in groups of `group_m` rows, column by column within a group: the cores working
// at once share the group's A rows and a few B columns, which stay in the L2 while the
// group's columns go by (row-major order would stream all of B through the L2 once per row).
void GemmBuilder::row_col(Reg tr) {
  if (group_m == 1) {
    k.Li(col, tiles_n);
    k.Op("divu", row, tr, col);
    k.Op("rem", col, tr, col);
    return;
  }
  k.Li(tmp, std::int64_t(group_m) * tiles_n);
  k.Op("divu", row, tr, tmp);  // the group
  k.Op("rem", col, tr, tmp);   // the tile within it
  k.Li(tmp, group_m);
  k.Mul(row, row, tmp);  // the group's first row
  k.Li(dst, tiles_m);
  k.Op("sub", dst, dst, row);
  k.Op("min", dst, dst, tmp);  // the group's rows (the last group may have fewer)
  k.Op("rem", tmp, col, dst);
  k.Add(row, row, tmp);
  k.Op("divu", col, col, dst);
}

// Load side: a_ptr = A + row x mt x k x eb; b_ptr = B + col x nt x eb (B^T: col x nt x k x eb;
// in fractal order: col x nt x 32, the tile's first row in the first fractal row).
void GemmBuilder::load_pointers(Reg tr) {
  row_col(tr);
  if (!conv) {
    k.Li(tmp, std::int64_t(t.mt) * s.k * eb);
    k.Mul(a_ptr, row, tmp);
    k.Add(a_ptr, a_ptr, A);
  }
  col_start(b_ptr, s.b_fractal ? 32 : s.b_transposed ? std::int64_t(s.k) * eb : std::int64_t(eb));
  k.Add(b_ptr, b_ptr, B);
  edge_configs();
}

// out = the columns of tile column col that exist (all nt with shift_n).
void GemmBuilder::valid_cols(Reg out) {
  if (shift_n)
    k.Li(out, t.nt);
  else
    valid(out, col, t.nt, s.n);
}

// out = the first column of tile column col (col x nt; with shift_n at most n - nt) x `unit`.
void GemmBuilder::col_start(Reg out, std::int64_t unit) {
  if (!shift_n) {
    k.Li(tmp, std::int64_t(t.nt) * unit);
    k.Mul(out, col, tmp);
    return;
  }
  k.Li(tmp, t.nt);
  k.Mul(out, col, tmp);
  k.Li(tmp, std::int64_t(s.n - t.nt));
  k.Op("min", out, out, tmp);
  if (unit != 1) {
    k.Li(tmp, unit);
    k.Mul(out, out, tmp);
  }
}

// out = base + the first C1 plane of tile column col's extended group (col x nt / coute of
// them, c1e planes of h x w positions each).
void GemmBuilder::group_planes(Reg out, Reg base) {
  k.Li(tmp, t.nt);
  k.Mul(out, col, tmp);
  k.Li(tmp, conv->coute());
  k.Op("divu", out, out, tmp);
  k.Li(tmp, std::int64_t(conv->c1e()) * conv->h * conv->w * 32);
  k.Mul(out, out, tmp);
  k.Add(out, out, base);
}

// out = min(tile, size - index x tile): the rows (or columns) of tile `index` that exist.
void GemmBuilder::valid(Reg out, Reg index, std::uint32_t tile, std::uint32_t size) {
  k.Li(tmp, tile);
  k.Mul(out, index, tmp);
  k.Li(tmp, size);
  k.Op("sub", out, tmp, out);
  k.Li(tmp, tile);
  k.Op("min", out, out, tmp);
}

// Load side, with edges: the ND -> Nz words of this tile's chunks (and of its last, shorter
// one), for the rows of A (edge_m) and the columns of B (edge_n) that exist; the rest of the
// tile is zeros. Without its edge, a side's words are the same for every tile: constants.
void GemmBuilder::edge_configs() {
  if (edge_m && !conv) {
    valid(dst, row, t.mt, s.m);
    k.Li(tmp, std::int64_t(Nd2NzCfg{0, t.kt, s.k, t.mt}.pack()));
    k.Op("or", a_cfg, tmp, dst);
    k.Li(tmp, std::int64_t(Nd2NzCfg{0, k_tail, s.k, t.mt}.pack()));
    k.Op("or", a_tail, tmp, dst);
  }
  if (!edge_n) return;
  valid_cols(dst);
  if (s.b_fractal) {
    fractal_b_cfg(b_cfg, t.kt / k0);
    fractal_b_cfg(b_tail, k_tail_f / k0);
    return;
  }
  if (!s.b_transposed) k.OpI("shli", dst, dst, 16);  // B's columns; B^T's rows
  const Nd2NzCfg whole = s.b_transposed ? Nd2NzCfg{0, t.kt, s.k, t.nt} : Nd2NzCfg{t.kt, 0, s.n, t.kt};
  const Nd2NzCfg last = s.b_transposed ? Nd2NzCfg{0, k_tail, s.k, t.nt} : Nd2NzCfg{k_tail, 0, s.n, t.kt};
  k.Li(tmp, std::int64_t(whole.pack()));
  k.Op("or", b_cfg, tmp, dst);
  k.Li(tmp, std::int64_t(last.pack()));
  k.Op("or", b_tail, tmp, dst);
}

// A fractal_z B chunk's DataCopy word for the dst rows of B^T that exist (an edge tile's): frows
// fractal rows of the tile's rows, from fractal rows n16 rows apart in GM to nt apart in L1
// (the rows past dst are left as they are: they make only columns of C that are not written).
// A B no later kernel reads (b_once) with one row of tiles: each of its columns is read once, by
// one core, so it does not allocate in the L2, where it would evict the activations the next
// layers read (and, dirty, write them back to DRAM first). With more rows, the next row's tiles
// find it there.
DataCopyCfg GemmBuilder::fractal_b(std::uint32_t frows, std::uint32_t rows) const {
  DataCopyCfg c{frows, rows, n16 - rows, t.nt - rows};
  c.no_alloc = s.b_once && tiles_m == 1;
  return c;
}
void GemmBuilder::fractal_b_cfg(Reg out, std::uint32_t frows) {
  // The word for no rows, then dst rows added to the length and taken off both gaps (no field
  // borrows: dst is at most nt and n16).
  k.Li(out, std::int64_t(fractal_b(frows, 0).pack()));
  for (auto [shift, add] : {std::pair{12, true}, {28, false}, {44, false}}) {
    k.OpI("shli", tmp, dst, shift);
    k.Op(add ? "add" : "sub", out, out, tmp);
  }
}

// MTE2: the next chunk of the load side into L1 buffer b (`tail`: the last, of k_tail columns;
// `next`: the next tile's, whose B a b_resident conv keeps when its column is this tile's).
void GemmBuilder::load(int b, bool tail, bool next) {
  const std::uint32_t kc = tail ? k_tail : t.kt;
  k.WaitFlag(Pipe::MTE1, Pipe::MTE2, b);
  if (!conv) {
    k.Li(dst, std::int64_t(l1a[b]));
    if (edge_m)
      k.Nd2Nz(in, dst, a_ptr, tail ? a_tail : a_cfg);
    else
      k.Nd2Nz(in, dst, a_ptr, Nd2NzCfg{t.mt, kc, s.k, t.mt});
    k.Addi(a_ptr, a_ptr, std::int32_t(t.kt * eb));
  }
  if (b_resident && next) {  // the flags still pass, so the buffer's hand-over is unchanged
    Label kept = k.NewLabel();
    k.Li(tmp, tiles_n);
    k.Op("rem", tmp, dim, tmp);
    k.Branch("beq", tmp, zero, kept);
    load_b(b, tail);
    k.Bind(kept);
  } else {
    load_b(b, tail);
  }
  k.SetFlag(Pipe::MTE2, Pipe::MTE1, b);
}

// MTE2: chunk b of B (of the load side's column) into L1, and b_ptr to the next chunk.
void GemmBuilder::load_b(int b, bool tail) {
  const std::uint32_t kc = tail ? k_tail : t.kt;
  k.Li(dst, std::int64_t(l1b[b]));
  if (s.b_fractal && edge_n)  // kc in whole fractal rows (zeros past k), each of nt rows
    k.DataCopy(Pos::L1, dst, Pos::GM, b_ptr, tail ? b_tail : b_cfg);
  else if (s.b_fractal)
    k.DataCopy(Pos::L1, dst, Pos::GM, b_ptr, fractal_b((tail ? k_tail_f : t.kt) / k0, t.nt));
  else if (edge_n)
    k.Nd2Nz(in, dst, b_ptr, tail ? b_tail : b_cfg);
  else if (s.b_transposed)  // B^T chunk: nt rows of n, kt columns of k
    k.Nd2Nz(in, dst, b_ptr, Nd2NzCfg{t.nt, kc, s.k, t.nt});
  else
    k.Nd2Nz(in, dst, b_ptr, Nd2NzCfg{kc, t.nt, s.n, t.kt});
  if (s.b_transposed && !s.b_fractal) {
    k.Addi(b_ptr, b_ptr, std::int32_t(t.kt * eb));
  } else {  // the next chunk: kt rows of B, or kt / k0 fractal rows of B^T
    k.Li(tmp, s.b_fractal ? std::int64_t(t.kt / k0) * n16 * 32 : std::int64_t(t.kt) * s.n * eb);
    k.Add(b_ptr, b_ptr, tmp);
  }
}

// The vector epilogue of L0C part h (at l0c_addr), on UB slot h % nu (alt_slots: the tile's):
// FixPipe L0C -> UB (accumulator type); x the scale row, + the bias row, + the residual tile,
// ReLU or ReLU6, cast to C's type; MTE3 -> GM.
void GemmBuilder::epilogue(int h, Reg l0c_addr) {
  if (!alt_slots()) return epilogue_in(h, h % nu, l0c_addr);
  by_parity(lc, [&](int u) { epilogue_in(h, u, l0c_addr); });
}

// The epilogue of part h on UB slot u.
void GemmBuilder::epilogue_in(int h, int u, Reg l0c_addr) {
  const std::uint64_t slot = std::uint64_t(u) * slot_bytes;
  if (s.residual) load_residual(h, u, slot);
  k.WaitFlag(Pipe::MTE3, Pipe::FIX, u);
  k.Li(dst, std::int64_t(slot));
  k.Fixpipe(Pos::UB, half ? s.out : acc, acc, dst, l0c_addr, FixpCfg{t.mt, ntp, ntp});
  fix_m(true, h);
  k.SetFlag(Pipe::FIX, Pipe::V, u);
  k.WaitFlag(Pipe::FIX, Pipe::V, u);
  if (rows && h == 0) k.WaitFlag(Pipe::MTE2, Pipe::V, rows_event(u));  // this tile's rows
  if (rows && h == 0 && half) rows_to_half(u);
  if (s.residual) k.WaitFlag(Pipe::MTE2, Pipe::V, 1 + u);
  epilogue_vector(slot, u, h);
  if (rows && h == parts - 1) k.SetFlag(Pipe::V, Pipe::MTE2, rows_event(u));  // the rows may be replaced
  if (s.residual && !cast) res_slot_flag(true, u);
  k.SetFlag(Pipe::V, Pipe::MTE3, u);
  k.WaitFlag(Pipe::V, Pipe::MTE3, u);
  k.Addi(dst, c_ptr, std::int32_t(h * ntp * ob));
  k.Li(src, std::int64_t(cast ? slot + cast_off : slot));
  if (s.out_nc1hwc0) {
    copy_out_blocks(h, cast ? slot + cast_off : slot);
  } else if (ragged) {
    ragged_out(h);
  } else if (edge_m || edge_n) {  // the part's rows and columns that exist; none: no copy
    Label none = k.NewLabel();
    k.OpI("shli", tmp, out_cfg[h], 36);  // block_len, bits 27:12
    k.OpI("shri", tmp, tmp, 48);
    k.Branch("beq", tmp, zero, none);
    k.DataCopy(Pos::GM, dst, Pos::UB, src, out_cfg[h]);
    k.Bind(none);
  } else {
    k.DataCopy(Pos::GM, dst, Pos::UB, src, DataCopyCfg{t.mt, ntp * ob / 32, 0, (s.n - ntp) * ob / 32});
  }
  k.SetFlag(Pipe::MTE3, Pipe::FIX, u);
  if (s.residual && cast) res_slot_flag(true, u);  // the cast, where the next residual goes, is out
}

// MTE2: part h's residual tile (C's shape and type, at R + the part's offset in C) into slot
// u: the output copy read the other way, its two gaps swapped. Uses row and col (free here;
// src holds the L0C address).
// The residual tile of part h when C's rows are no whole number of blocks apart: row by row
// from tmp (GM) into dst (UB), each row's blocks (what it reads past the row is not used).
void GemmBuilder::load_residual_rows(int h) {
  const Reg cfg = row;
  Label none = k.NewLabel();
  if (!edge_m && !edge_n) {  // whole tiles (shift_n): mt rows of whole blocks
    k.Li(cfg, std::int64_t(DataCopyCfg{1, ntp * ob / 32, 0, 0}.pack()));
    k.Li(col, t.mt);
  } else {  // the part's rows and blocks (one more for bytes past its whole blocks)
    const Reg o = out_cfg[h];
    k.OpI("shri", cfg, o, 32);
    k.Op("sltu", cfg, zero, cfg);
    k.OpI("shli", col, o, 36);
    k.OpI("shri", col, col, 48);
    k.Add(cfg, cfg, col);
    k.OpI("shli", cfg, cfg, 12);
    k.OpI("ori", cfg, cfg, 1);
    k.OpI("shri", col, cfg, 12);
    k.Branch("beq", col, zero, none);  // no columns in this part
    k.OpI("andi", col, o, 0xfff);      // rows
  }
  k.Loop(col, [&] {  // (src holds the part's L0C address: not a temporary here)
    k.DataCopy(Pos::UB, dst, Pos::GM, tmp, cfg);
    k.Addi(tmp, tmp, std::int32_t(std::uint64_t(s.n) * ob));
    k.Addi(dst, dst, std::int32_t(ntp * ob));
  });
  k.Bind(none);
}

// The flag that frees slot u's residual place for MTE2, set or waited: the vector unit's, once it
// has read the residual, or MTE3's, once it has read the cast that shares the place.
void GemmBuilder::res_slot_flag(bool set, int u) {
  const Pipe from = cast ? Pipe::MTE3 : Pipe::V;
  const int event = cast ? u : 1 + u;
  if (set)
    k.SetFlag(from, Pipe::MTE2, event);
  else
    k.WaitFlag(from, Pipe::MTE2, event);
}

void GemmBuilder::load_residual(int h, int u, std::uint64_t slot) {
  res_slot_flag(false, u);
  k.Op("sub", tmp, c_ptr, C);
  k.Add(tmp, tmp, R);
  if (s.out_nc1hwc0) {
    load_residual_blocks(h, slot + res_off);
    k.SetFlag(Pipe::MTE2, Pipe::V, 1 + u);
    return;
  }
  k.Addi(tmp, tmp, std::int32_t(h * ntp * ob));
  k.Li(dst, std::int64_t(slot + res_off));
  if (ragged) {
    load_residual_rows(h);
  } else if (edge_m || edge_n) {
    Label none = k.NewLabel();
    const Reg o = out_cfg[h], cfg = row;
    k.OpI("shli", cfg, o, 36);  // block_len, bits 27:12: nothing to load when 0
    k.OpI("shri", cfg, cfg, 48);
    k.Branch("beq", cfg, zero, none);
    k.OpI("shli", cfg, o, 36);  // count and length (bits 27:0) as they are
    k.OpI("shri", cfg, cfg, 36);
    k.OpI("shri", col, o, 44);  // the GM gap (bits 59:44) becomes the source gap (43:28)
    k.OpI("shli", col, col, 28);
    k.Op("or", cfg, cfg, col);
    k.OpI("shli", col, o, 20);  // the UB gap (43:28) becomes the destination gap (59:44)
    k.OpI("shri", col, col, 48);
    k.OpI("shli", col, col, 44);
    k.Op("or", cfg, cfg, col);
    k.DataCopy(Pos::UB, dst, Pos::GM, tmp, cfg);
    k.Bind(none);
  } else {
    k.DataCopy(Pos::UB, dst, Pos::GM, tmp, DataCopyCfg{t.mt, ntp * ob / 32, (s.n - ntp) * ob / 32, 0});
  }
  k.SetFlag(Pipe::MTE2, Pipe::V, 1 + u);
}

void GemmBuilder::epilogue_vector(std::uint64_t slot, int u, int h) {
  const std::uint32_t seg = std::min<std::uint32_t>(seg_elems(), ntp);
  for (std::uint32_t j = 0; j < ntp; j += seg)
    for (std::uint32_t r0 = 0; r0 < t.mt; r0 += 255)
      if (half)
        epilogue_rows_half(slot, u, r0, std::min<std::uint32_t>(255, t.mt - r0), j, h);
      else
        epilogue_rows(slot, u, r0, std::min<std::uint32_t>(255, t.mt - r0), j, h);
}

// The tile's bias and scale rows (f32, as loaded) rounded to f16 for the f16 epilogue, 64 a
// repeat, the last repeat under a mask of what is left (rows of 16 columns). The mask the
// epilogue set (min(ntp, 128) lanes, of which an f32 repeat sees the first 64) is put back.
void GemmBuilder::rows_to_half(int u) {
  const std::uint32_t count = (int(s.bias) + int(s.channel_scale)) * t.nt, had = std::min(ntp, seg_elems());
  std::uint32_t lanes = std::min<std::uint32_t>(had, 64);  // what an f32 repeat sees of the mask
  auto cast = [&](std::uint32_t from, std::uint32_t repeats, std::uint32_t want) {
    if (want != lanes) {
      k.Li(tmp, want);
      k.SetMaskCount(tmp);
      lanes = want;
    }
    k.Li(dst, std::int64_t(rows16_at(u) + from * 2));
    k.Li(src, std::int64_t(rows_at(u) + from * 4));
    k.Cast(DType::F16, DType::F32, dst, src, VecCfg{repeats, 1, 1, 1, 4, 8, 0});
  };
  if (count >= 64) cast(0, count / 64, 64);
  if (count % 64) cast(count / 64 * 64, 1, count % 64);
  if (lanes != std::min<std::uint32_t>(had, 64)) {
    k.Li(tmp, had);
    k.SetMaskCount(tmp);
  }
}

// The f16 epilogue's rows r0.. (n of them) of part h's segment from column j (up to 128
// columns, one repeat a row), FixPipe's f16 results at `slot`: y = act(y x scale + bias +
// residual), each step in f16 and rounded to f16, as the vector unit does it in an fp16 network.
void GemmBuilder::epilogue_rows_half(std::uint64_t slot, int u, std::uint32_t r0, std::uint32_t n, std::uint32_t j,
                                     int h) {
  const std::uint32_t row_blocks = ntp * 2 / 32;
  const std::uint64_t e = std::uint64_t(r0) * ntp + j;  // the first element's index in the part
  const VecCfg vc{n, 1, 1, 1, row_blocks, row_blocks, 0};
  k.Li(dst, std::int64_t(slot + e * 2));
  auto per_column = [&](std::uint64_t row, const char* op) {  // row: 0 bias, 1 scale (after a bias)
    k.Li(src, std::int64_t(rows16_at(u) + (row * t.nt + std::uint64_t(h) * ntp + j) * 2));
    k.Vector(op, DType::F16, {dst, dst, src}, vc);
  };
  if (s.channel_scale) per_column(s.bias ? 1 : 0, "mul");
  if (s.bias) per_column(0, "add");
  if (s.residual) {
    k.Li(src, std::int64_t(slot + res_off + e * 2));
    k.Vector("add", DType::F16, {dst, dst, src}, VecCfg{n, 1, 1, 1, row_blocks, row_blocks, row_blocks});
  }
  if (s.relu || s.relu6) k.Vector("relu", DType::F16, {dst, dst}, vc);
  if (s.relu6) {
    k.Li(tmp, 0x4600);  // 6.0 in f16
    k.Vector("mins", DType::F16, {dst, dst, tmp}, vc);
  }
}

// Rows r0.. (n of them) of the segment of part h from column j (up to 64 columns), one repeat
// per row: the row pitch is the repeat stride, a per-column row's is 0.
void GemmBuilder::epilogue_rows(std::uint64_t slot, int u, std::uint32_t r0, std::uint32_t n, std::uint32_t j, int h) {
  const std::uint32_t row_blocks = ntp * 4 / 32, out_blocks = ntp * ob / 32;
  const std::uint64_t e = std::uint64_t(r0) * ntp + j;  // the first element's index in the part
  const VecCfg vc{n, 1, 1, 1, row_blocks, row_blocks, 0};
  k.Li(dst, std::int64_t(slot + e * 4));
  auto per_column = [&](std::uint64_t ub_row, const char* op) {
    k.Li(src, std::int64_t(ub_row + (std::uint64_t(h) * ntp + j) * 4));
    k.Vector(op, acc, {dst, dst, src}, vc);
  };
  if (s.channel_scale) per_column(rows_at(u) + (s.bias ? std::uint64_t(t.nt) * 4 : 0), "mul");
  if (s.bias) per_column(rows_at(u), "add");
  if (s.residual) {
    k.Li(src, std::int64_t(slot + res_off + e * ob));
    std::uint32_t res_blocks = row_blocks;
    if (ob != 4) {  // C's type -> f32 (exact from f16 and bf16), n rows of the segment in the scratch
      res_blocks = std::min<std::uint32_t>(64, ntp) * 4 / 32;
      k.Li(tmp, std::int64_t(ub_resf));
      k.Cast(DType::F32, s.out, tmp, src, VecCfg{n, 1, 1, 1, res_blocks, out_blocks, 0});
      k.Op("or", src, tmp, zero);
    }
    k.Vector("add", acc, {dst, dst, src}, VecCfg{n, 1, 1, 1, row_blocks, row_blocks, res_blocks});
  }
  if (s.relu || s.relu6) k.Vector("relu", acc, {dst, dst}, vc);
  if (s.relu6) {
    k.Li(tmp, 0x40C00000);  // 6.0f
    k.Vector("mins", acc, {dst, dst, tmp}, vc);
  }
  if (quant) {  // s32 -> f32 in place, times the scale
    k.Cast(DType::F32, acc, dst, dst, vc);
    k.Vector("muls", DType::F32, {dst, dst, scale}, vc);
  }
  if (cast) {
    k.Li(src, std::int64_t(slot + cast_off + e * ob));
    k.Cast(s.out, quant ? DType::F32 : acc, src, dst, VecCfg{n, 1, 1, 1, out_blocks, row_blocks, 0});
  }
}

// NC1HWC0 C: column block j of part h (16 columns) is the tile's rows x 16, contiguous at
// c_ptr + (h x nfp + j) x m x 16 elements (c_ptr: the tile's first row in its first block).
void GemmBuilder::block_at(Reg out, Reg base, int h, std::uint32_t j) {
  k.Li(out, std::int64_t(h * nfp + j) * s.m * 16 * ob);
  k.Add(out, out, base);
}

// FixPipe to an NC1HWC0 C: a write per column block of part h, from its column of fractals in
// L0C (src: the part's address; mf fractals high). out_cfg: the rows that exist (edge_m).
void GemmBuilder::fixpipe_blocks(int h) {
  for (std::uint32_t j = 0; j < nfp; ++j) {
    block_at(dst, c_ptr, h, j);
    if (j) k.Addi(src, src, std::int32_t(mf * 1024));
    if (edge_m)
      k.Fixpipe(Pos::GM, s.out, acc, dst, src, out_cfg[h], scale, s.relu);
    else
      k.Fixpipe(Pos::GM, s.out, acc, dst, src, FixpCfg{t.mt, 16, 16, mf}, scale, s.relu);
  }
}

// MTE3 of the epilogue's result (UB at `ub`: the part's rows, ntp wide) to an NC1HWC0 C: per
// column block, its 16 columns of every row (a gap of the row's other blocks in UB), one
// contiguous run in C.
void GemmBuilder::copy_out_blocks(int h, std::uint64_t ub) {
  const std::uint32_t len = 16 * ob / 32, gap = ntp * ob / 32 - len;
  for (std::uint32_t j = 0; j < nfp; ++j) {
    block_at(dst, c_ptr, h, j);
    k.Li(src, std::int64_t(ub + j * 16 * ob));
    if (edge_m)
      k.DataCopy(Pos::GM, dst, Pos::UB, src, out_cfg[h]);
    else
      k.DataCopy(Pos::GM, dst, Pos::UB, src, DataCopyCfg{t.mt, len, gap, 0});
  }
}

// MTE2: part h's residual tile from an NC1HWC0 residual (tmp: R + the tile's offset in C) into
// UB at `ub`, the output copy read the other way. Uses row and col (free here).
void GemmBuilder::load_residual_blocks(int h, std::uint64_t ub) {
  const std::uint32_t len = 16 * ob / 32, gap = ntp * ob / 32 - len;
  const Reg cfg = col;
  k.Li(cfg, std::int64_t(DataCopyCfg{edge_m ? 0 : t.mt, len, 0, gap}.pack()));
  if (edge_m) {  // the rows that exist (out_cfg's bits 11:0)
    k.OpI("andi", row, out_cfg[h], 0xfff);
    k.Op("or", cfg, cfg, row);
  }
  for (std::uint32_t j = 0; j < nfp; ++j) {
    block_at(row, tmp, h, j);
    k.Li(dst, std::int64_t(ub + j * 16 * ob));
    k.DataCopy(Pos::UB, dst, Pos::GM, row, cfg);
  }
}

// MTE1 then cube: one chunk's A and part h of its B into L0 buffer l0; C part h (+)= A x B.
void GemmBuilder::step(const Act& a) {
  step_mte1(a);
  step_cube(a);
}

void GemmBuilder::step_mte1(const Act& a) {
  const int b = a.buf, l0 = a.l0, h = a.part;
  if (a.first_use) k.WaitFlag(Pipe::MTE2, Pipe::MTE1, b);
  k.WaitFlag(Pipe::M, Pipe::MTE1, l0);
  if (conv) {
    // A: the img2col window of this tile's rows and this chunk's columns.
    if (a.kdelta) k.Addi(kstart, kstart, a.kdelta * std::int32_t(t.kt));
    k.Op("or", window, kstart, wbase);  // wbase: (m_start << 32) | (kt << 16) | (mt << 48)
    if (short_k(a)) {                   // the last chunk's k_ext: k_tail
      k.Li(dst, std::int64_t(t.kt - k_tail_f) << 16);
      k.Op("sub", window, window, dst);
    }
    k.Li(dst, std::int64_t(l0a[l0]));
    k.LoadData3D(Pos::L0A, in, dst, banded || grouped ? band_l1 : zero, filter, window);
    if (banded && a.last) {  // the tile's last img2col: its band slot may be refilled
      by_parity(par, [&](int p) { k.SetFlag(Pipe::MTE1, Pipe::MTE2, 6 + p); });
      k.OpI("xori", par, par, 1);
    }
  } else {
    // A, Nz in L1 -> zZ in L0A: one load per column of fractals (mf apart in L1, kf in L0A).
    for (std::uint32_t kk = 0; kk < kf; ++kk) {
      k.Li(dst, std::int64_t(l0a[l0] + kk * 512));
      k.Li(src, std::int64_t(l1a[b] + std::uint64_t(kk) * mf * 512));
      k.LoadData(Pos::L0A, in, dst, src, Load2dCfg{mf, 1, kf - 1});
    }
  }
  if (s.b_transposed) {
    // B^T in Nz: its fractals are already B^T's; part h's columns of fractals, as for A (a
    // conv's short last chunk: its kfs columns).
    const std::uint32_t kfs = short_k(a) ? k_tail_f / k0 : kf;
    for (std::uint32_t kk = 0; kk < kfs; ++kk) {
      k.Li(dst, std::int64_t(l0b[l0] + kk * 512));
      k.Li(src, std::int64_t(l1b[b] + (std::uint64_t(kk) * nf + std::uint64_t(h) * nfp) * 512));
      k.LoadData(Pos::L0B, in, dst, src, Load2dCfg{nfp, 1, kfs - 1});
    }
  } else {
    // B in Nz: its fractal order is B^T's zN order already; transpose inside each fractal.
    k.Li(dst, std::int64_t(l0b[l0]));
    k.Li(src, std::int64_t(l1b[b] + std::uint64_t(h) * nfp * kf * 512));
    k.LoadData(Pos::L0B, in, dst, src, Load2dCfg{kf * nfp, 1, 0}, true);
  }
  if (a.last_use) k.SetFlag(Pipe::MTE1, Pipe::MTE2, b);
  k.SetFlag(Pipe::MTE1, Pipe::M, l0);
}

void GemmBuilder::step_cube(const Act& a) {
  const int l0 = a.l0, h = a.part;
  k.WaitFlag(Pipe::MTE1, Pipe::M, l0);
  if (a.first) fix_m(false, h);  // FixPipe has read the part's previous tile (in this buffer)
  l0c_at(tmp, h);
  k.Li(dst, std::int64_t(l0a[l0]));
  k.Li(src, std::int64_t(l0b[l0]));
  k.Mmad(acc, in, tmp, dst, src, MmadCfg{t.mt, short_k(a) ? k_tail_f : t.kt, ntp, a.first});
  k.SetFlag(Pipe::M, Pipe::MTE1, l0);
  if (!a.last) return;
  part_flag(Pipe::M, Pipe::FIX, true, h);  // per buffer: the cube may finish the next tile first
  part_flag(Pipe::M, Pipe::FIX, false, h);
  l0c_at(src, h);
  if (epi) {
    epilogue(h, src);
  } else if (s.out_nc1hwc0) {
    fixpipe_blocks(h);
    fix_m(true, h);
  } else {
    k.Addi(dst, c_ptr, std::int32_t(h * ntp * ob));
    if (edge_m || edge_n)  // the rows and columns of this part that exist
      k.Fixpipe(Pos::GM, s.out, acc, dst, src, out_cfg[h], scale, s.relu);
    else
      k.Fixpipe(Pos::GM, s.out, acc, dst, src, FixpCfg{t.mt, ntp, s.n}, scale, s.relu);
    fix_m(true, h);
  }
  if (l0c_bufs == 2 && h == parts - 1) {  // the next tile computes into the other buffer
    k.Li(dst, std::int64_t(l0c_tile));
    k.Op("sub", lc, dst, lc);
  }
}

// out = the L0C address of part h of this tile's buffer.
void GemmBuilder::l0c_at(Reg out, int h) {
  k.Li(out, std::int64_t(h) * nfp * mf * 1024);
  if (l0c_bufs == 2) k.Add(out, out, lc);
}

// The flag between the cube and FixPipe of part h of this tile's L0C buffer: set or wait.
void GemmBuilder::part_flag(Pipe from, Pipe to, bool set, int h) {
  auto flag = [&](int event) {
    if (set)
      k.SetFlag(from, to, event);
    else
      k.WaitFlag(from, to, event);
  };
  if (l0c_bufs == 1) return flag(h);
  by_parity(lc, [&](int p) { flag(h + 2 * p); });
}

void GemmBuilder::emit(const Act& a) {
  switch (a.kind) {
    case Act::Load: load(a.buf, a.tail); break;
    case Act::NextTile: {  // the load side moves to this block's next tile, if any
      Label none = k.NewLabel();
      k.Add(ld_tile, tile, dim);
      k.Branch("bgeu", ld_tile, ntiles, none);
      load_pointers(ld_tile);
      if (banded) load_band(ld_tile);
      k.Bind(none);
      break;
    }
    case Act::NextLoad: {
      Label none = k.NewLabel();
      k.Branch("bgeu", ld_tile, ntiles, none);
      load(a.buf, a.tail, true);
      k.Bind(none);
      break;
    }
    case Act::Step: step(a); break;
  }
}

// C's rows end inside 32-byte blocks, so C's row stride is no whole number of blocks: part h
// goes out row by row from dst (GM) and src (UB), each row's whole blocks by one copy (every
// tile nt columns wide, the last shifted to end at n: shift_n). row and col are free here (the
// load side sets them again at its next tile).
void GemmBuilder::ragged_out(int h) {
  if (gemm_narrow(s)) return narrow_out(h);
  if (edge_m)
    k.OpI("andi", col, out_cfg[h], 0xfff);  // rows
  else
    k.Li(col, t.mt);
  k.Loop(col, [&] {  // every tile is nt columns wide (shift_n): a part's row is whole blocks
    k.DataCopy(Pos::GM, dst, Pos::UB, src, DataCopyCfg{1, ntp * ob / 32, 0, 0});
    k.Li(tmp, std::int64_t(s.n) * ob);
    k.Add(dst, dst, tmp);
    k.Addi(src, src, std::int32_t(ntp * ob));
  });
}

// Rows narrower than a tile (gemm_narrow: n = 3 f16, n = 10 f32): part 0 holds all of them
// (n < 16 <= its width). A row goes out as the rb blocks from its first byte that cover it, the
// bytes past it landing in the rows after it, which write them again. A whole tile (mt rows,
// whose bytes end on a block boundary: mt is a multiple of 16) ends with rows whose blocks would
// reach into the next tile's rows: the tile's last q blocks, from the first such row's first
// byte on, are assembled instead, element by element from their UB rows by the scalar unit, and
// written ending at the tile's end. The last row tile (fewer rows) ends C: its blocks past it
// stay in C's own pages.
void GemmBuilder::narrow_out(int h) {
  if (h > 0) return;
  const std::uint64_t row_bytes = std::uint64_t(s.n) * ob, tile_bytes = t.mt * row_bytes, rb = narrow_blocks(s);
  const std::uint32_t fwd = std::uint32_t((tile_bytes - 32 * rb) / row_bytes + 1);  // rows whose blocks stay inside
  const std::uint64_t q = (tile_bytes - fwd * row_bytes + 31) / 32;                 // <= rb
  Label partial = k.NewLabel(), done = k.NewLabel();
  k.OpI("andi", col, out_cfg[0], 0xfff);  // rows
  k.Li(tmp, t.mt);
  k.Branch("bne", col, tmp, partial);
  k.SetFlag(Pipe::V, Pipe::S, 0);  // the scalar unit reads what the vector unit wrote
  k.WaitFlag(Pipe::V, Pipe::S, 0);
  k.Li(col, fwd);
  narrow_rows();
  k.WaitFlag(Pipe::MTE3, Pipe::S, 0);  // ub_tail's last copy has read it
  const std::int64_t first = std::int64_t(tile_bytes - 32 * q) / ob, at = -std::int64_t(fwd) * ntp * ob;
  for (std::int64_t word = 0, e = first; word < std::int64_t(4 * q); ++word) {  // T, 8 bytes at a time
    k.Li(row, 0);
    for (std::int64_t i = 0; i < 8 / ob; ++i, ++e) {
      const std::int64_t byte = at + (e / s.n) * ntp * ob + (e % s.n) * ob;  // from src
      k.LoadUb(tmp, src, std::int32_t(byte & ~std::int64_t(7)));
      k.OpI("shli", tmp, tmp, std::int32_t(64 - 8 * ((byte & 7) + ob)));
      k.OpI("shri", tmp, tmp, std::int32_t(64 - 8 * ob));  // the element, zero-extended
      if (i) k.OpI("shli", tmp, tmp, std::int32_t(8 * ob * i));
      k.Op("or", row, row, tmp);
    }
    k.StoreUb(row, zero, std::int32_t(ub_tail + 8 * word));
  }
  k.Li(tmp, std::int64_t(tile_bytes - 32 * q) - std::int64_t(fwd) * std::int64_t(row_bytes));
  k.Add(tmp, dst, tmp);
  k.Li(row, std::int64_t(ub_tail));
  k.DataCopy(Pos::GM, tmp, Pos::UB, row, DataCopyCfg{1, std::uint32_t(q), 0, 0});
  k.SetFlag(Pipe::MTE3, Pipe::S, 0);
  k.Jump(done);
  k.Bind(partial);
  narrow_rows();
  k.Bind(done);
}

// `col` rows, each the blocks from its first byte that cover it; dst and src move past them.
void GemmBuilder::narrow_rows() {
  k.Loop(col, [&] {
    k.DataCopy(Pos::GM, dst, Pos::UB, src, DataCopyCfg{1, std::uint32_t(narrow_blocks(s)), 0, 0});
    k.Li(tmp, std::int64_t(s.n) * ob);
    k.Add(dst, dst, tmp);
    k.Addi(src, src, std::int32_t(ntp * ob));
  });
}

// The compute side of a tile: c_ptr, and for a conv the img2col window, then its program.
void GemmBuilder::run_tile(const std::vector<Act>& program) {
  tile_pointers();
  emit_compressed(
      program, [&](const Act& a) { emit(a); },
      [&](std::size_t reps, auto body) {
        k.Li(count, std::int64_t(reps));
        k.Loop(count, body);
      });
}

// MTE2: this tile's bias and scale rows (bias + col x nt x 4, and the scale's).
// MTE2: the tile's bias and scale rows into its slot's set (with alt_slots, lc tells the slot).
void GemmBuilder::load_rows() {
  if (!alt_slots()) return load_rows_in(0);
  by_parity(lc, [&](int u) { load_rows_in(u); });
}

void GemmBuilder::load_rows_in(int u) {
  k.WaitFlag(Pipe::V, Pipe::MTE2, rows_event(u));
  if (edge_n) {  // the 32-byte blocks that hold the tile's columns that exist
    valid(src, col, t.nt, s.n);
    k.OpI("shli", src, src, 2);
    k.Addi(src, src, 31);
    k.OpI("shri", src, src, 5);
    k.OpI("shli", src, src, 12);
    k.Li(tmp, std::int64_t(DataCopyCfg{1, 0, 0, 0}.pack()));
    k.Op("or", src, src, tmp);
  }
  const std::uint64_t bias_at = rows_at(u), scale_at = bias_at + (s.bias ? std::uint64_t(t.nt) * 4 : 0);
  for (auto [gm, ub] : {std::pair{bias, bias_at}, std::pair{cscale, scale_at}}) {
    if (gm.n == zero.n) continue;
    col_start(dst, 4);
    k.Add(tmp, dst, gm);
    k.Li(dst, std::int64_t(ub));
    if (edge_n)
      k.DataCopy(Pos::UB, dst, Pos::GM, tmp, src);
    else
      k.DataCopy(Pos::UB, dst, Pos::GM, tmp, DataCopyCfg{1, t.nt * 4 / 32, 0, 0});
  }
  k.SetFlag(Pipe::MTE2, Pipe::V, rows_event(u));
}

void GemmBuilder::tile_pointers() {
  row_col(tile);
  // c_ptr = C + (row x mt x n + col x nt) x ob; NC1HWC0: C + (col x nt / 16 x m + row x mt) x 16 x ob
  k.Li(tmp, std::int64_t(t.mt) * (s.out_nc1hwc0 ? 16 : s.n) * ob);
  k.Mul(c_ptr, row, tmp);
  col_start(dst, s.out_nc1hwc0 ? std::int64_t(s.m) * ob : ob);
  k.Add(c_ptr, c_ptr, dst);
  k.Add(c_ptr, c_ptr, C);
  output_configs();
  if (rows) load_rows();
  if (!conv) return;
  // For load3d: (m_start << 32) | (kt << 16) | (mt << 48), with m_start = row x mt (banded:
  // counted from the band's first output row); k_start (bits 15:0) is kstart, which the steps
  // move.
  if (banded) {
    band_window();
  } else {
    if (grouped) group_planes(band_l1, zero);
    k.Li(tmp, std::int64_t(t.mt));
    k.Mul(wbase, row, tmp);
  }
  k.OpI("shli", wbase, wbase, 32);
  k.Li(tmp, std::int64_t(std::uint64_t(t.kt) << 16 | std::uint64_t(t.mt) << 48));
  k.Op("or", wbase, wbase, tmp);
  k.Li(kstart, 0);
}

// Compute side, with edges: each part's output words for the rows and columns of this tile
// that exist: FixPipe's (m, n, stride), or with bias the MTE3 copy's (rows, blocks, gap).
void GemmBuilder::output_configs() {
  if (!edge_m && !edge_n) return;
  if (s.out_nc1hwc0) {  // whole column blocks (shift_n): the rows, then a block's FixPipe or copy word
    const std::uint32_t len = 16 * ob / 32;
    valid(dst, row, t.mt, s.m);
    k.Li(tmp, std::int64_t(epi ? DataCopyCfg{0, len, ntp * ob / 32 - len, 0}.pack() : FixpCfg{0, 16, 16, mf}.pack()));
    for (int h = 0; h < parts; ++h) k.Op("or", out_cfg[h], tmp, dst);
    return;
  }
  valid(dst, row, t.mt, s.m);  // rows
  valid_cols(src);             // columns of the tile
  for (int h = 0; h < parts; ++h) {
    const Reg o = out_cfg[h];
    if (h == 0) {
      k.Li(tmp, ntp);
      k.Op("min", o, src, tmp);
    } else {  // the columns past part 0's, at most ntp
      k.Addi(o, src, -std::int32_t(ntp));
      k.Op("max", o, o, zero);
    }
    if (!epi) {
      k.OpI("shli", o, o, 16);
      k.Op("or", o, o, dst);
      k.Li(tmp, std::int64_t(FixpCfg{0, 0, s.n, t.mt / 16}.pack()));  // L0C holds the whole tile
      k.Op("or", o, o, tmp);
      continue;
    }
    k.Li(tmp, ob);
    k.Mul(o, o, tmp);
    if (ragged) {  // rows (11:0), whole blocks (27:12), bytes past them (36:32): ragged_out
      k.OpI("andi", tmp, o, 31);
      k.OpI("shli", tmp, tmp, 32);
      k.OpI("shri", o, o, 5);
      k.OpI("shli", o, o, 12);
      k.Op("or", o, o, tmp);
      k.Op("or", o, o, dst);
      continue;
    }
    // Blocks of 32 B: columns x ob / 32 per row; the gaps to the next row: in UB the part's
    // rows are ntp wide, in C n.
    k.OpI("shri", o, o, 5);
    k.Li(tmp, std::int64_t(s.n) * ob / 32);
    k.Op("sub", tmp, tmp, o);
    k.OpI("shli", tmp, tmp, 44);
    k.Op("or", dst, dst, tmp);
    k.Li(tmp, std::int64_t(ntp) * ob / 32);
    k.Op("sub", tmp, tmp, o);
    k.OpI("shli", tmp, tmp, 28);
    k.Op("or", dst, dst, tmp);
    k.OpI("shli", o, o, 12);
    k.Op("or", o, o, dst);
    if (h + 1 < parts) valid(dst, row, t.mt, s.m);  // the rows again, for the next part
  }
}

Image build(const AiCoreConfig& cfg, const GemmShape& s, const ConvShape* conv) {
  return GemmBuilder(cfg, s, conv).build();
}

}  // namespace

Image gemm_kernel(const AiCoreConfig& cfg, const GemmShape& s) { return build(cfg, s, nullptr); }

GemmShape conv2d_gemm_shape(const ConvShape& c) {
  // C (ho x wo, cout) = A (ho x wo, c x kh x kw) x B (c x kh x kw, cout), with B given as B^T.
  GemmShape s{c.ho() * c.wo(), c.k(), c.cout, c.out, DType::F16, true, c.relu, c.bias};
  s.channel_scale = c.scale, s.residual = c.residual, s.relu6 = c.relu6;
  s.out_nc1hwc0 = c.out_nc1hwc0;
  s.b_fractal = c.weights_fractal;
  s.b_once = c.weights_once;
  s.f16_epilogue = c.f16_epilogue;
  return s;
}

namespace {

void check_conv(const ConvShape& c) {
  if (!c.c || !c.cout || !c.h || !c.w) throw Error("conv2d: h, w, c and cout must be at least 1");
  if (!c.kh || !c.kw || !c.stride_h || !c.stride_w || !c.dil_h || !c.dil_w)
    throw Error("conv2d: filter size, stride and dilation must be at least 1");
  if (c.h + c.pad_t + c.pad_b < c.dil_h * (c.kh - 1) + 1 || c.w + c.pad_l + c.pad_r < c.dil_w * (c.kw - 1) + 1)
    throw Error("conv2d: the filter is larger than the padded input");
  if (c.pad_t > c.dil_h * (c.kh - 1) || c.pad_b > c.dil_h * (c.kh - 1))
    throw Error("conv2d: padding above or below of more than the dilated filter's extent less one (" +
                std::to_string(c.dil_h * (c.kh - 1)) + ") gives output rows that read only padding");
  if (c.c0 != 16 && c.c0 != 4) throw Error("conv2d: c0 is 16, or 4 for the small-channel mode");
  if (c.out_nc1hwc0 && c.cout % 16)
    throw Error("conv2d: an NC1HWC0 y takes cout a multiple of 16 (got " + std::to_string(c.cout) + ")");
  if (c.c0 == 4 && (c.c > 4 || c.groups != 1))
    throw Error("conv2d: c0 = 4 (the small-channel mode) takes at most 4 channels and one group (c = " +
                std::to_string(c.c) + ", groups = " + std::to_string(c.groups) + ")");
  if (!c.groups || c.c % c.groups || c.cout % c.groups)
    throw Error("conv2d: groups (" + std::to_string(c.groups) + ") must divide c (" + std::to_string(c.c) +
                ") and cout (" + std::to_string(c.cout) + ")");
}

}  // namespace

Image conv2d_kernel(const AiCoreConfig& cfg, const ConvShape& c) {
  check_conv(c);
  return conv2d_words([&] { return build(cfg, conv2d_gemm_shape(c), &c); });
}

std::string conv2d_tiling(const AiCoreConfig& cfg, const ConvShape& c) {
  check_conv(c);
  const GemmShape s = conv2d_gemm_shape(c);
  const GemmTiling t = conv2d_words([&] { return gemm_tiling(cfg, s, &c); });
  const ConvL1 fm = conv_l1(c, t.mt, t.nt, std::uint64_t(t.kt) * t.nt * 2, cfg.size[kL1], cfg.cores);
  return t.str() + " (img2col; " +
         (fm.whole ? std::string("the feature map in L1")
                   : "the feature map in bands of up to " + std::to_string(fm.band_rows) + " input " +
                         (fm.columns ? "columns" : "rows")) +
         ")";
}

}  // namespace dvp::kernels
