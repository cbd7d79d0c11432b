// SPDX-License-Identifier: MIT
#include "media_launcher.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <png.h>

#include "common/error.hpp"
#include "common/payload.hpp"
#include "common/system.hpp"
#include "media_reference.hpp"

namespace dvp::platform {

using cfg::Type;

namespace {

const cfg::Choices<dvpp_status> kExpect = {
    {"done", DVPP_DONE, "decoded"},
    {"corrupt", DVPP_ERR_CORRUPT, "refused as corrupt or truncated"},
    {"unsupported", DVPP_ERR_UNSUPPORTED, "refused as valid but not decodable by the engine"},
    {"size", DVPP_ERR_SIZE, "refused for its width or height"},
    {"align", DVPP_ERR_ALIGN, "refused for a misaligned buffer"},
    {"out_size", DVPP_ERR_OUT_SIZE, "refused: the output buffer is too small"},
    {"format", DVPP_ERR_FORMAT, "refused: the output format is not available for this input"},
};

const cfg::Choices<dvpp_csc> kCsc = {
    {"bt601_full", DVPP_CSC_BT601_FULL, "BT.601, full range (JFIF: what JPEGD writes)"},
    {"bt601_limited", DVPP_CSC_BT601_LIMITED, "BT.601, limited range (SD video)"},
    {"bt709_limited", DVPP_CSC_BT709_LIMITED, "BT.709, limited range (HD video)"},
};

std::uint64_t page_up(std::uint64_t v) { return (v + 4095) / 4096 * 4096; }

}  // namespace

struct MediaLauncher::Job {
  std::string name, input;  // input: the file, or "job NAME" for a picture another job makes
  const dvpp::EngineConfig* engine = nullptr;
  dvpp_status expect = DVPP_DONE;
  std::uint32_t repeat = 1, first_tag = 0;  // commands submitted; the first one's tag
  unsigned wave = 0;                        // submitted after the jobs of the waves before it completed
  unsigned final_wave = 0;                  // the wave after which its buffer is final (its pastes')
  bool read = false;                        // another job reads its output (from:)
  const Job* from = nullptr;                // the job whose output is this one's input (VPC)
  const Job* into = nullptr;                // VPC stitching: the job whose canvas this one pastes into
  std::vector<const Job*> pasted;           // the jobs that paste into this one's canvas, in order
  bool check = true;
  double psnr_min = 0;
  std::string save;
  std::vector<std::uint8_t> file;    // the input's bytes (from: the source's expected picture)
  dvpp_cmd cmd{};                    // the command, its addresses and VPC fields filled
  dvpp::Decoded host;                // the engine's codec on the host: the picture's layout and size
  std::vector<std::uint8_t> output;  // read back after the run
  std::uint64_t cmd_addr = 0;        // firmware mode: the command tasks submit
};

void MediaLauncher::describe(cfg::Spec& e) {
  std::vector<std::string> engines, formats;
  for (const dvpp::Codec& c : dvpp::codecs()) engines.emplace_back(c.name);
  for (int f = 0; f <= DVPP_FMT_P010; ++f) formats.emplace_back(dvpp::format_name(dvpp_format(f)));
  e.param("name", Type::String, "job name, for kernels (dvpp:) and reports; one job each");
  e.param("engine", Type::Enum, "the DVPP engine (platform.dvpp must configure it)").choices(engines);
  e.param("input", Type::String,
          "the input file, relative to the scenario: .jpg, .png, .h264 / .h265 for the decoders; for vpc, jpege and "
          "venc a raw .yuv picture (every frame at its picture: size, one after another, as ffmpeg -f rawvideo "
          "writes them)")
      .optional();
  e.param("from", Type::String,
          "vpc, jpege, venc: the job (earlier in the list) whose output picture (venc: every frame of it) is the "
          "input; this job is submitted when that one has completed")
      .optional();
  e.param("picture", Type::IntList, "a .yuv input's [width, height]; rows and planes packed (even sizes for 4:2:0)")
      .optional();
  e.param("picture_format", Type::Enum, "a .yuv input's format").choices(formats).defaults("nv12");
  describe_vpc(e);
  e.param("psnr_min", Type::Float,
          "vpc: the least PSNR against a plain bilinear reference (crop, resize, conversion in floating point); "
          "jpege, venc: of the stream, decoded by TurboJPEG / libavcodec, against the pictures encoded")
      .unit("dB")
      .defaults("30")
      .range(0, 200);
  e.param("format", Type::Enum, "output format (enum dvpp_format; native: the engine's own for the input)")
      .choices(formats)
      .defaults("native");
  e.param("repeat", Type::Int, "times the command is submitted (throughput runs); all write the same buffer")
      .defaults("1")
      .range(1, 1000000);
  describe_video(e);
  e.param("quality", Type::Int, "jpege: the quality, 1 .. 100 (libjpeg's scale of the standard tables)")
      .defaults("90")
      .range(1, 100);
  e.param("expect", Type::Enum, "the status every frame must end with: " + kExpect.doc())
      .choices(kExpect.names())
      .defaults("done");
  e.param("check", Type::Bool, "compare the output with the host library's decode of the file, bit for bit")
      .defaults("true");
  e.param("save", Type::String,
          "write the output after the run, relative to the output directory: a picture's buffer as laid out, strides "
          "included (.yuv, .nv12, .rgb, ...; not an encoded format's name such as .jpg), or .png (rgb888 / rgba8888 "
          "outputs); an encoder's stream as it is (.jpg, .h264, .h265)")
      .optional();
  e.param("in_offset", Type::Int, "bytes added to the input's (page-aligned) address")
      .unit("B")
      .defaults("0")
      .range(0, 4095);
  e.param("out_offset", Type::Int, "bytes added to the output's (page-aligned) address")
      .unit("B")
      .defaults("0")
      .range(0, 4095);
  e.param("out_size", Type::Int, "the output buffer's capacity (default: the picture's size)")
      .unit("B")
      .optional()
      .min(1);
}

// VPC's keys: the crop, the size, the canvas and where the picture goes in it, the conversion.
void MediaLauncher::describe_vpc(cfg::Spec& e) {
  e.param("crop", Type::IntList, "vpc: [x, y, width, height] of the input taken (default: all of it)").optional();
  e.param("canvas", Type::IntList,
          "vpc: [width, height] of the output picture the resized crop is pasted into, the rest filled (padding, "
          "letterboxing; default: the resized crop's size)")
      .optional();
  e.param("paste", Type::IntList,
          "vpc: [x, y] of the resized crop in the canvas (x even on 4:2:0 and 4:2:2, y on 4:2:0)")
      .optional();
  e.param("fill", Type::IntList,
          "vpc: the canvas's fill, the output format's channels (Y U V, or R G B (A)), 0 .. 255 each (default: "
          "black, opaque: 0 128 128, or 0 0 0 255)")
      .optional();
  e.param("into", Type::String,
          "vpc: stitching: the resized crop is pasted into this earlier vpc job's output picture (its format and "
          "canvas), the rest of it kept; submitted after that job")
      .optional();
  e.param("resize", Type::IntList, "vpc: [width, height] of the output (default: the crop's)").optional();
  e.param("csc", Type::Enum, "vpc: the colour conversion where YUV meets RGB: " + kCsc.doc())
      .choices(kCsc.names())
      .defaults("bt601_full");
}

// VDEC's and VENC's keys: the codec, the frames, the QP and GOP.
void MediaLauncher::describe_video(cfg::Spec& e) {
  e.param("stream", Type::Enum,
          "vdec, venc: the stream's codec (default: by the extension of the input, vdec, or of save:, venc: .h264 "
          ".264 .h265 .265 .hevc; venc without one: h264)")
      .choices({"h264", "h265"})
      .optional();
  e.param("max_frames", Type::Int, "vdec: the most frames to decode (0: all); venc: the frames to encode (0: all)")
      .defaults("0")
      .min(0);
  e.param("qp", Type::Int, "venc: the constant quantisation parameter (lower: better pictures, more bits)")
      .defaults("28")
      .range(0, 51);
  e.param("gop", Type::Int, "venc: frames from one IDR frame to the next (0: only the first)")
      .defaults("30")
      .range(0, 1 << 30);
}

MediaLauncher::MediaLauncher(sc_core::sc_module_name n, const cfg::Node& entries, const std::string& dir,
                             dvpp::Dvpp& dvpp, dram::Storage& dram, std::uint64_t dram_base, std::uint64_t regs_base,
                             bool functional, bool firmware)
    : sc_module(n),
      regs("regs"),
      socket("socket"),
      dvpp_(dvpp),
      dram_(dram),
      base_(dram_base),
      regs_base_(regs_base),
      top_(dram.size() / 4096 * 4096),
      functional_(functional) {
  for (const cfg::Node& e : entries.items()) read_entry(e, dir);
  if (!functional_) preload_outputs();
  if (firmware) {
    for (std::size_t i = 0; i < jobs_.size(); ++i) place_command(*jobs_[i], entries.items()[i]);
    done_ = true;
    return;
  }
  reserve_queues(entries);
  SC_HAS_PROCESS(MediaLauncher);
  SC_THREAD(run);
}

// Each engine's queue below the buffers, room for all its commands.
void MediaLauncher::reserve_queues(const cfg::Node& entries) {
  for (const dvpp::EngineConfig& ec : dvpp_.config().engines) {
    std::uint64_t n = 0;
    for (const auto& j : jobs_) n += j->engine == &ec ? j->repeat : 0, waves_ = std::max(waves_, j->wave + 1);
    const std::uint64_t bytes = page_up(n * sizeof(dvpp_cmd));
    if (!n) continue;
    if (bytes + 4096 > top_) entries.fail("the command queues do not fit in DRAM below the media buffers");
    top_ -= bytes;
    queues_.push_back({&ec, top_, n});
  }
}

bool MediaLauncher::output_of(const std::string& name, Output& out) const {
  for (const auto& j : jobs_)
    if (j->name == name && j->engine->codec->picture_out && j->expect == DVPP_DONE) {
      out.offset = j->cmd.out_addr - base_, out.bytes = j->cmd.out_size, out.picture = &j->host.picture;
      return true;
    }
  return false;
}

// When a job's own commands completed (kTickMax while one has not).
Tick MediaLauncher::end_of(const Job& j) const {
  Tick end = 0;
  std::uint32_t n = 0;
  for (const dvpp::Dvpp::Frame& f : dvpp_.frames())
    if (f.engine == j.engine->codec->engine && f.tag >= j.first_tag && f.tag < j.first_tag + j.repeat)
      end = std::max(end, f.end), ++n;
  return n == j.repeat ? end : kTickMax;
}

// A canvas is complete when its pastes are.
Tick MediaLauncher::completed(const std::string& name) const {
  for (const auto& j : jobs_) {
    if (j->name != name) continue;
    Tick end = end_of(*j);
    for (const Job* q : j->pasted) end = std::max(end, end_of(*q));
    return end;
  }
  return kTickMax;
}

// A paste into `canvas`: its rows must not meet another paste's (the result would depend on
// which finished first); the canvas's picture takes them (what a job reading it sees), and is
// final a wave later.
void MediaLauncher::add_paste(Job& canvas, const Job& q, const cfg::Node& e) {
  if (q.expect != DVPP_DONE || q.host.status != DVPP_DONE) return;  // refused: writes nothing
  for (const Job* o : canvas.pasted)
    for (const auto& [a, n] : o->host.spans)
      for (const auto& [b, m] : q.host.spans)
        if (a < b + m && b < a + n)
          (e.has("paste") ? e.at("paste") : e).fail("overlaps job '" + o->name + "''s paste into the canvas");
  for (const auto& [off, len] : q.host.spans)
    std::copy_n(q.host.picture.bytes.begin() + std::ptrdiff_t(off), len,
                canvas.host.picture.bytes.begin() + std::ptrdiff_t(off));
  canvas.pasted.push_back(&q);
  canvas.final_wave = std::max(canvas.final_wave, q.wave);
}

MediaLauncher::~MediaLauncher() = default;

namespace {
// Engines whose input is a picture in memory, not a file's bitstream.
bool takes_picture(const dvpp::Codec& c) { return !c.bitstream_in; }
}  // namespace

// The input: a file (read), or another job's output picture (`from:`).
void MediaLauncher::read_input(Job& j, const cfg::Node& e, const std::string& dir) {
  const bool picture = takes_picture(*j.engine->codec);
  const std::string engine = j.engine->codec->name;
  if (e.has("input") == e.has("from"))
    e.fail(picture ? engine + " takes a picture: from: a job, or input: a .yuv file" : "give input: a file");
  if (e.has("from")) {
    if (!picture)
      e.at("from").fail("only vpc, jpege and venc take another job's picture; " + j.name + " decodes a file (input:)");
    for (const auto& o : jobs_)
      if (o->name == e.get_string("from")) j.from = o.get();
    if (!j.from) e.at("from").fail("no job '" + e.get_string("from") + "' before this one");
    if (j.from->expect != DVPP_DONE) e.at("from").fail("job '" + j.from->name + "' is expected to fail");
    if (!j.from->engine->codec->picture_out)
      e.at("from").fail("job '" + j.from->name + "' writes a stream, not a picture");
    if (j.from->into)
      e.at("from").fail("job '" + j.from->name + "' pastes into job '" + j.from->into->name + "': read that one");
    // A canvas is read once its pastes are in: their picture (host.picture holds them).
    j.input = "job " + j.from->name, j.file = j.from->host.picture.bytes, j.wave = j.from->final_wave + 1;
    jobs_of(j.from).read = true;
    return;
  }
  j.input = e.get_string("input");
  const std::string path = j.input.rfind('/', 0) == 0 ? j.input : dir + "/" + j.input;
  errno = 0;
  std::ifstream f(path, std::ios::binary);
  if (!f) e.at("input").fail("cannot open " + path + ": " + (errno ? std::strerror(errno) : "open failed"));
  j.file.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  if (j.file.empty()) e.at("input").fail(path + " is empty");
  if (picture) read_yuv(j, e, path);
}

// A raw picture file's layout (picture:, picture_format:) into the command's in_* fields: packed
// rows and planes, whole frames.
void MediaLauncher::read_yuv(Job& j, const cfg::Node& e, const std::string& path) {
  if (!e.has("picture"))
    e.at("input").fail(std::string(j.engine->codec->name) + " reads a raw picture: give its picture: [width, height]");
  const std::vector<std::uint64_t> v = e.get_uint_list("picture");
  if (v.size() != 2 || !v[0] || !v[1] || v[0] > 65535 || v[1] > 65535)
    e.at("picture").fail("give [width, height], each 1 .. 65535");
  const int format = dvpp::format_by_name(e.get_string("picture_format"));
  if (format == DVPP_FMT_NATIVE) e.at("picture_format").fail("name the file's format");
  dvpp::Picture p;
  p.format = dvpp_format(format), p.width = std::uint32_t(v[0]), p.height = std::uint32_t(v[1]);
  dvpp::set_strides(p, dvpp::Limits{});
  if ((p.stride_w != p.width || p.stride_h != p.height))
    e.at("picture").fail(std::string("a packed ") + dvpp::format_name(p.format) + " picture has an even width" +
                         (p.format == DVPP_FMT_YUV422SP ? "" : " and height"));
  const std::uint64_t frame = dvpp::picture_bytes(p.format, p.stride_w, p.stride_h);
  if (j.file.size() % frame)
    e.at("input").fail(path + " (" + std::to_string(j.file.size()) + " B) is not a whole number of " +
                       std::to_string(p.width) + " x " + std::to_string(p.height) + " " + dvpp::format_name(p.format) +
                       " frames (" + std::to_string(frame) + " B each)");
  dvpp_cmd& c = j.cmd;
  c.in_format = p.format, c.in_width = p.width, c.in_height = p.height, c.in_stride_w = p.stride_w;
  c.in_stride_h = p.stride_h;
}

// VDEC's and VENC's fields of the command: the stream's codec (given, or by the extension of the
// file read or saved), the frames; VENC's QP and GOP.
void MediaLauncher::read_stream(Job& j, const cfg::Node& e) {
  const bool venc = j.engine->codec->engine == DVPP_VENC;
  std::string kind = e.has("stream") ? e.get_string("stream") : "";
  const std::string file = venc ? (e.has("save") ? e.get_string("save") : "") : j.input;
  const std::string ext = file.substr(file.find_last_of('.') + 1);
  if (kind.empty() && (ext == "h264" || ext == "264")) kind = "h264";
  if (kind.empty() && (ext == "h265" || ext == "265" || ext == "hevc")) kind = "h265";
  if (kind.empty() && venc) kind = "h264";
  if (kind.empty()) e.at("input").fail("say the stream's codec (stream: h264 or h265): ." + ext + " does not");
  j.cmd.stream = kind == "h264" ? DVPP_STREAM_H264 : DVPP_STREAM_H265;
  if (!venc) check_annex_b(j, e, kind);
  j.cmd.max_frames = std::uint32_t(e.get_uint("max_frames"));
  if (venc) j.cmd.qp = std::uint32_t(e.get_uint("qp")), j.cmd.gop = std::uint32_t(e.get_uint("gop"));
}

// VDEC reads an elementary stream (Annex B: NAL units after 00 00 01 start codes), as the hardware
// does. A container file (what cameras and ffmpeg write by default) or the other codec's stream
// is named here with the way out, rather than failing in the decoder as corrupt data.
void MediaLauncher::check_annex_b(const Job& j, const cfg::Node& e, const std::string& kind) {
  const std::vector<std::uint8_t>& f = j.file;
  const auto has = [&](std::size_t at, const char* text) {
    const std::size_t n = std::strlen(text);
    return f.size() >= at + n && std::memcmp(f.data() + at, text, n) == 0;
  };
  const char* container = has(4, "ftyp") || has(4, "moov") || has(4, "mdat") ? "an MP4 (ISO BMFF)"
                          : has(0, "\x1a\x45\xdf\xa3")                       ? "a Matroska or WebM"
                          : has(0, "RIFF") && has(8, "AVI ")                 ? "an AVI"
                          : has(0, "FLV")                                    ? "an FLV"
                          : f.size() > 376 && f[0] == 0x47 && f[188] == 0x47 && f[376] == 0x47
                              ? "an MPEG transport stream"
                              : nullptr;
  const std::string codec = kind == "h264" ? "h264" : "hevc";
  if (container)
    e.at("input").fail(j.input + " is " + container + " file, not an elementary stream: take the video out with " +
                       "ffmpeg -i " + j.input + " -c:v copy -bsf:v " + codec + "_mp4toannexb -f " + codec + " OUT." +
                       kind);
  // The first NAL unit's header: H.265's video parameter set is 0x40 0x01; H.264's sequence
  // parameter set 0x67 (an H.265 NAL type of 51, which no stream starts with).
  std::size_t i = 0;
  while (i + 4 < f.size() && !(f[i] == 0 && f[i + 1] == 0 && f[i + 2] == 1)) ++i;
  if (i + 4 >= f.size()) return;  // no start code: the decoder's error names it
  if (kind == "h264" && f[i + 3] == 0x40 && f[i + 4] == 0x01)
    e.at("input").fail(j.input + " starts with an H.265 video parameter set: give stream: h265");
  if (kind == "h265" && f[i + 3] == 0x67)
    e.at("input").fail(j.input + " starts with an H.264 sequence parameter set: give stream: h264");
}

// VPC's fields of the command: the source's picture, the crop, the size, the conversion.
void MediaLauncher::read_vpc(Job& j, const cfg::Node& e) {
  dvpp_cmd& c = j.cmd;
  c.csc = kCsc.parse(e.at("csc"));
  if (e.has("crop")) {
    const std::vector<std::uint64_t> v = e.get_uint_list("crop");
    if (v.size() != 4) e.at("crop").fail("give [x, y, width, height]");
    c.crop_x = std::uint32_t(v[0]), c.crop_y = std::uint32_t(v[1]), c.crop_w = std::uint32_t(v[2]);
    c.crop_h = std::uint32_t(v[3]);
  }
  if (e.has("resize")) {
    const std::vector<std::uint64_t> v = e.get_uint_list("resize");
    if (v.size() != 2 || !v[0] || !v[1]) e.at("resize").fail("give [width, height], each at least 1");
    c.out_width = std::uint32_t(v[0]), c.out_height = std::uint32_t(v[1]);
  }
  read_canvas(j, e);
  if (!j.from) return;
  const dvpp::Picture& p = j.from->host.picture;
  c.in_format = p.format, c.in_width = p.width, c.in_height = p.height, c.in_stride_w = p.stride_w;
  c.in_stride_h = p.stride_h;
}

// VPC's canvas: its size, the paste offset, the fill; or another job's canvas (into:, stitching).
void MediaLauncher::read_canvas(Job& j, const cfg::Node& e) {
  dvpp_cmd& c = j.cmd;
  auto pair = [&](const char* key, std::uint32_t& a, std::uint32_t& b) {
    if (!e.has(key)) return;
    const std::vector<std::uint64_t> v = e.get_uint_list(key);
    if (v.size() != 2 || v[0] > 65535 || v[1] > 65535) e.at(key).fail("give two numbers, 0 .. 65535");
    a = std::uint32_t(v[0]), b = std::uint32_t(v[1]);
  };
  pair("canvas", c.canvas_w, c.canvas_h);
  pair("paste", c.paste_x, c.paste_y);
  const bool rgb =
      e.get_string("format") == "rgb888" || e.get_string("format") == "rgba8888" ||
      (e.get_string("format") == "native" && j.from &&
       (j.from->host.picture.format == DVPP_FMT_RGB888 || j.from->host.picture.format == DVPP_FMT_RGBA8888));
  c.fill = rgb ? 0xff000000u : 0x00808000u;  // black: Y 0, U V 128; R G B 0, alpha 255
  if (e.has("fill")) {
    const std::vector<std::uint64_t> v = e.get_uint_list("fill");
    c.fill = rgb && v.size() < 4 ? 0xff000000u : 0;  // opaque unless an alpha is given
    if (v.empty() || v.size() > 4) e.at("fill").fail("give one to four channel values");
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] > 255) e.at("fill").fail("a channel value is 0 .. 255");
      c.fill |= std::uint32_t(v[i]) << (8 * i);
    }
  }
  if (!e.has("into")) return;
  if (j.engine->codec->engine != DVPP_VPC) e.at("into").fail("only vpc pastes into another job's canvas");
  for (const auto& o : jobs_)
    if (o->name == e.get_string("into") && o->engine == j.engine && !o->into && o->expect == DVPP_DONE)
      j.into = o.get();
  if (!j.into) e.at("into").fail("no vpc job '" + e.get_string("into") + "' before this one that makes a canvas");
  if (j.into->read) e.at("into").fail("a job already reads job '" + j.into->name + "''s canvas: paste before it");
  if (e.has("canvas") || e.has("fill") || e.get_string("format") != "native")
    e.at("into").fail("a paste takes its canvas, fill and format from job '" + j.into->name + "'");
  // The canvas the host made; if the platform refused it (a what-if's limits), the command's own
  // fields: the paste runs, and fails as its canvas did.
  const dvpp::Picture& canvas = j.into->host.picture;
  const bool made = j.into->host.status == DVPP_DONE;
  c.canvas_w = made ? canvas.width : j.into->cmd.canvas_w, c.canvas_h = made ? canvas.height : j.into->cmd.canvas_h;
  c.fill_mode = 1, c.out_format = made ? std::uint32_t(canvas.format) : j.into->cmd.out_format;
  j.wave = std::max(j.wave, j.into->wave + 1);
}

// A file name's extension, lower case (photo.PNG is a PNG).
static std::string extension_of(const std::string& file) {
  std::string ext = std::filesystem::path(file).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

// The input read, the command made and run by the engine's codec on the host (for the picture's
// size), and the buffers placed.
void MediaLauncher::read_entry(const cfg::Node& e, const std::string& dir) {
  auto j = std::make_unique<Job>();
  j->name = e.get_string("name");
  // A job's name is how kernels (dvpp:) and the results name it: one job each.
  for (const auto& other : jobs_)
    if (other->name == j->name) e.at("name").fail("a job named '" + j->name + "' is already in dvpp:");
  const dvpp::Codec* codec = dvpp::find_codec(e.get_string("engine"));
  j->engine = dvpp_.config().engine(codec->engine);
  if (!j->engine) e.at("engine").fail(std::string("platform.dvpp has no ") + codec->name + " section");
  read_input(*j, e, dir);
  j->expect = kExpect.parse(e.at("expect"));
  j->repeat = std::uint32_t(e.get_uint("repeat"));
  if (j->engine->codec->engine == DVPP_VDEC || j->engine->codec->engine == DVPP_VENC) read_stream(*j, e);
  j->check = e.get_bool("check");
  j->psnr_min = e.get_double("psnr_min");
  j->cmd.out_format = std::uint32_t(dvpp::format_by_name(e.get_string("format")));
  read_vpc(*j, e);
  if (j->engine->codec->engine == DVPP_JPEGE) j->cmd.quality = std::uint32_t(e.get_uint("quality"));
  // On the host, with the buffer the job names (or none: a VDEC stream's frames all kept), for the
  // picture's size.
  j->cmd.out_size = e.has("out_size") ? e.get_uint("out_size") : ~std::uint64_t(0);
  j->host = codec->decode(dvpp::Request{j->file.data(), j->file.size(), j->cmd}, j->engine->limits);
  const bool ok = j->host.status == DVPP_DONE;
  j->cmd.in_size = j->file.size();
  j->cmd.out_size = e.has("out_size") ? e.get_uint("out_size") : ok ? j->host.picture.bytes.size() : 4096;
  if (e.has("save")) {
    j->save = e.get_string("save");
    const std::string ext = extension_of(j->save);
    const bool png = ext == ".png";
    const bool rgb = j->host.picture.format == DVPP_FMT_RGB888 || j->host.picture.format == DVPP_FMT_RGBA8888;
    // A picture is written as a PNG or as its buffer (.yuv, .nv12, .rgb, ...): the name of an
    // encoded format would call raw bytes a JPEG or a BMP.
    static const std::set<std::string> kEncoded = {".jpg",  ".jpeg", ".bmp",  ".gif", ".webp", ".tif", ".tiff",
                                                   ".h264", ".264",  ".h265", ".265", ".hevc", ".mp4", ".mkv"};
    if (png && !rgb) e.at("save").fail(".png takes an rgb888 or rgba8888 output; save a YUV picture as .yuv");
    if (png && !codec->picture_out) e.at("save").fail(std::string(codec->name) + " writes a stream: save it as it is");
    if (codec->picture_out && kEncoded.count(ext))
      e.at("save").fail(
          "a picture is saved as .png (rgb888 / rgba8888) or as its buffer (.yuv, .nv12, .rgb, ...), "
          "not under the name of an encoded format (" +
          ext + ")");
  }
  place(*j, e);
  j->first_tag = jobs_.empty() ? 0 : jobs_.back()->first_tag + jobs_.back()->repeat;
  jobs_.push_back(std::move(j));
}

// The input (a file's bytes; a source job's output is its buffer) and the output buffer, from the
// top of DRAM down.
void MediaLauncher::place(Job& j, const cfg::Node& e) {
  const std::uint64_t in_bytes = j.from ? 0 : page_up(j.file.size() + e.get_uint("in_offset"));
  const std::uint64_t out_bytes = j.into ? 0 : page_up(j.cmd.out_size + e.get_uint("out_offset"));
  if (in_bytes + out_bytes + 4096 > top_) e.fail("the input and output do not fit in DRAM");
  top_ -= in_bytes;
  j.cmd.in_addr = j.from ? j.from->cmd.out_addr : base_ + top_ + e.get_uint("in_offset");
  top_ -= out_bytes;
  j.cmd.out_addr = j.into ? j.into->cmd.out_addr : base_ + top_ + e.get_uint("out_offset");
  j.final_wave = j.wave;
  if (j.into) {
    if (e.get_uint("out_offset") || e.has("out_size")) e.at("into").fail("a paste writes the canvas's buffer as it is");
    j.cmd.out_size = j.into->cmd.out_size;
    add_paste(jobs_of(j.into), j, e);
  }
  if (!j.from) std::memcpy(dram_.write_at(j.cmd.in_addr - base_, j.file.size()), j.file.data(), j.file.size());
}

// Firmware mode: the job's one command in DRAM, where its task points.
void MediaLauncher::place_command(Job& j, const cfg::Node& e) {
  if (j.repeat != 1) e.at("repeat").fail("with firmware, a task submits a job once: give it more tasks instead");
  if (j.expect != DVPP_DONE)
    e.at("expect").fail("with firmware, a refused command fails its task, and the run: expect a refusal in bare mode");
  if (top_ < 8192) e.fail("no room for its command in DRAM");
  top_ -= 4096;
  j.cmd_addr = base_ + top_;
  j.cmd.tag = j.first_tag;
  std::memcpy(dram_.write_at(top_, sizeof j.cmd), &j.cmd, sizeof j.cmd);
}

// A timing-only run moves no bytes, so a job that reads another's output would read what was
// never written; and an encoder's time follows its input's content (the stream's size). Each
// job's output buffer gets what its engine will write (the host's result), so every engine
// reads what it would have.
void MediaLauncher::preload_outputs() {
  for (const auto& j : jobs_) {
    if (j->host.status != DVPP_DONE || j->cmd.out_size < j->host.picture.bytes.size()) continue;
    const std::vector<std::uint8_t>& b = j->host.picture.bytes;
    std::uint8_t* at = dram_.write_at(j->cmd.out_addr - base_, b.size());
    if (j->host.spans.empty()) std::memcpy(at, b.data(), b.size());
    for (const auto& [off, len] : j->host.spans) std::memcpy(at + off, b.data() + off, len);
  }
}

MediaLauncher::Job& MediaLauncher::jobs_of(const Job* j) {
  for (auto& o : jobs_)
    if (o.get() == j) return *o;
  throw Error("media launcher: no such job");  // not reached: j is one of jobs_
}

bool MediaLauncher::task_of(const std::string& name, dvp_task& task) const {
  for (const auto& j : jobs_)
    if (j->name == name && j->cmd_addr) {
      task.type = DVP_TASK_DVPP;
      task.entry = j->engine->codec->engine;
      task.args = j->cmd_addr;
      task.blocks = 1;
      return true;
    }
  return false;
}

void MediaLauncher::write_reg(std::uint32_t offset, std::uint32_t value) {
  tlm::tlm_generic_payload p;
  prepare(p, true, regs_base_ + offset, reinterpret_cast<unsigned char*>(&value), 4);
  sc_core::sc_time d = sc_core::SC_ZERO_TIME;
  regs->b_transport(p, d);
  if (p.get_response_status() != tlm::TLM_OK_RESPONSE)
    system_of(*this).fail(std::string(name()) + ": writing DVPP's register at +" + hex(offset) + " failed");
  wait(d);
}

// Wave by wave (a job that takes another's picture is in the wave after it): the wave's commands
// in scenario order, one doorbell per engine, then every command of the wave completed.
void MediaLauncher::run() {
  for (unsigned w = 0; w < waves_; ++w) {
    for (Queue& q : queues_) {
      const std::uint32_t first = q.count;
      for (const auto& j : jobs_)
        for (std::uint32_t i = 0; j->engine == q.engine && j->wave == w && i < j->repeat; ++i) {
          dvpp_cmd c = j->cmd;
          c.tag = j->first_tag + i;
          // Through the hierarchy: an earlier wave's command may be in an L2 line.
          write_through(base_ + q.at + std::uint64_t(q.count++) * sizeof c, c);
        }
      if (q.count == first) continue;
      const std::uint32_t off = dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * q.engine->codec->engine;
      if (!first) {
        write_reg(off, std::uint32_t(base_ + q.at));
        write_reg(off + 4, std::uint32_t((base_ + q.at) >> 32));
        write_reg(off + 8, std::uint32_t(q.size));  // a slot for every command
      }
      write_reg(off + 0xc, q.count);
    }
    for (const Queue& q : queues_) {
      while (dvpp_.done(q.engine->codec->engine) < q.count) wait(dvpp_.completion());
      const std::uint32_t off = dvpp::Dvpp::kEngineBase + dvpp::Dvpp::kEngineStride * q.engine->codec->engine;
      write_reg(off + 0x1c, q.count);  // ACK: the interrupt line drops
    }
  }
  done_ = true;
  finished_.notify(sc_core::SC_ZERO_TIME);
}

// Debug transport through the hierarchy (the coherent bytes: an L2 line, else DRAM): the
// launcher stands for the firmware of a bare run and takes no simulated time.
void MediaLauncher::debug(bool write, std::uint64_t addr, std::uint8_t* data, std::uint64_t len) {
  tlm::tlm_generic_payload p;
  for (std::uint64_t off = 0; off < len;) {
    const std::uint64_t chunk = std::min<std::uint64_t>(len - off, 64 - (addr + off) % 64);
    prepare(p, write, addr + off, data + off, unsigned(chunk));
    if (socket->transport_dbg(p) != chunk)
      throw Error(std::string(name()) + ": cannot " + (write ? "write " : "read back ") + hex(addr + off));
    off += chunk;
  }
}

void MediaLauncher::write_through(std::uint64_t addr, dvpp_cmd cmd) {
  debug(true, addr, reinterpret_cast<std::uint8_t*>(&cmd), sizeof cmd);
}

std::vector<std::uint8_t> MediaLauncher::read_back(std::uint64_t addr, std::uint64_t len) {
  std::vector<std::uint8_t> out(len);
  debug(false, addr, out.data(), len);
  return out;
}

const std::vector<MediaLauncher::Result>& MediaLauncher::check() {
  if (checked_) return results_;
  checked_ = true;
  for (auto& j : jobs_) {
    Result r;
    r.name = j->name, r.engine = j->engine->codec->name, r.input = j->input, r.commands = j->repeat;
    r.start = kTickMax;
    for (const dvpp::Dvpp::Frame& f : dvpp_.frames())
      if (f.engine == j->engine->codec->engine && f.tag >= j->first_tag && f.tag < j->first_tag + j->repeat) {
        r.frames += f.frames;
        // The first command's status, unless one differs from what the job expects: that one.
        const bool first = r.start == kTickMax;
        if (first || (f.status != j->expect && r.status == j->expect)) r.status = f.status, r.reason = f.reason;
        r.width = f.width, r.height = f.height, r.out_bytes = f.out_bytes;
        r.start = std::min(r.start, f.start), r.end = std::max(r.end, f.end);
      }
    r.format = j->host.picture.format;
    check_job(*j, r);
    failed_ += r.checked && !r.passed;
    results_.push_back(r);
  }
  return results_;
}

// The status against `expect`; a decoded picture against the host library's, bit for bit.
void MediaLauncher::check_job(Job& j, Result& r) {
  r.checked = true;
  const std::string what = r.input + " (" + r.engine + ")";
  if (r.status == DVPP_PENDING) {
    r.passed = false;
    r.detail = what + ": not run (no task submitted it)";
    return;
  }
  if (r.status != j.expect) {
    r.passed = false;
    r.detail = what + ": " + dvpp::status_name(r.status) + (r.reason.empty() ? "" : ": " + r.reason) +
               (j.expect == DVPP_DONE ? "" : std::string(" (expected: ") + dvpp::status_name(j.expect) + ")");
    return;
  }
  if (r.status != DVPP_DONE) {
    r.detail = what + ": " + dvpp::status_name(r.status) + ", as expected: " + r.reason;
    return;
  }
  // With firmware, the tasks order the jobs: a picture read, or pasted into, before it was done.
  const Job* before = j.into ? j.into : j.from;
  const Tick ready = j.into ? end_of(*j.into) : j.from ? completed(j.from->name) : 0;
  if (before && r.start < ready) {
    r.passed = false;
    r.detail = what + ": started at " + std::to_string(r.start / 1e6) + " us, before job '" + before->name +
               "' completed (" + (ready == kTickMax ? std::string("never") : std::to_string(ready / 1e6) + " us") +
               "): order them with an event";
    return;
  }
  const dvpp::Picture& like = j.host.picture;
  const std::string pic = std::to_string(r.width) + " x " + std::to_string(r.height) + " " +
                          dvpp::format_name(like.format) + ", " + std::to_string(r.frames) + " frame" +
                          (r.frames == 1 ? "" : "s");
  if (!functional_) {
    r.checked = false;
    r.detail = pic + "; pixels not compared: a timing-only run moves none";
    return;
  }
  // A picture as the host laid it out; a stream as long as the engine wrote it.
  j.output = read_back(j.cmd.out_addr, j.engine->codec->picture_out ? like.bytes.size() : r.out_bytes);
  dvpp::Picture have = like;
  have.bytes = j.output;
  if (!j.check) {
    r.checked = false;
    r.detail = pic + "; check: false";
    return;
  }
  const dvpp_engine engine = j.engine->codec->engine;
  if (takes_picture(*j.engine->codec)) {
    try {
      check_from_picture(j, r, have, pic);
    } catch (const Error& e) {  // the host library cannot read what the engine wrote
      r.passed = false;
      r.detail = std::string("the output does not decode on the host: ") + e.what();
    }
    return;
  }
  const PixelDiff d = compare_pictures(
      have, engine == DVPP_VDEC ? video_reference(j.file, dvpp_stream(j.cmd.stream), like, j.host.frames)
                                : reference_picture(engine, j.file, like));
  r.passed = d.differ == 0;
  const std::string ref = reference_name(engine);
  r.detail = pic + (r.passed ? "; bit-identical to " + ref + " (" + std::to_string(d.compared) + " visible bytes)"
                             : "; " + std::to_string(d.differ) + " of " + std::to_string(d.compared) +
                                   " visible bytes differ from " + ref + ", the first at " + d.where);
}

namespace {
// The picture (every frame of it) a job's command reads.
dvpp::Picture source_of(const dvpp_cmd& c, const std::vector<std::uint8_t>& bytes) {
  dvpp::Picture p;
  p.format = dvpp_format(c.in_format), p.width = c.in_width, p.height = c.in_height;
  p.stride_w = c.in_stride_w, p.stride_h = c.in_stride_h, p.bytes = bytes;
  return p;
}
}  // namespace

namespace {
// PSNR over the bytes of `spans` (a paste's part of a canvas), dB.
double psnr_spans(const dvpp::Picture& have, const dvpp::Picture& want,
                  const std::vector<std::pair<std::uint64_t, std::uint64_t>>& spans) {
  double sum = 0;
  std::uint64_t n = 0;
  for (const auto& [off, len] : spans)
    for (std::uint64_t i = off; i < off + len; ++i, ++n) {
      const double d = double(have.bytes.at(i)) - double(want.bytes.at(i));
      sum += d * d;
    }
  return sum == 0 ? INFINITY : 10.0 * std::log10(255.0 * 255.0 * double(n) / sum);
}
}  // namespace

// A VPC job's reference picture, with the parts later jobs pasted into its canvas (stitching).
dvpp::Picture MediaLauncher::canvas_reference(const Job& j, const dvpp::Picture& like) const {
  dvpp::Picture ref = vpc_reference(source_of(j.cmd, j.file), j.cmd, like);
  for (const Job* q : j.pasted) {
    const dvpp::Picture part = vpc_reference(source_of(q->cmd, q->file), q->cmd, like);
    for (const auto& [off, len] : q->host.spans)
      std::copy_n(part.bytes.begin() + std::ptrdiff_t(off), len, ref.bytes.begin() + std::ptrdiff_t(off));
  }
  return ref;
}

// An engine that reads a picture: an encoder's stream decoded on the host and compared by PSNR
// with the pictures encoded; VPC's picture against a plain bilinear reference.
void MediaLauncher::check_from_picture(Job& j, Result& r, const dvpp::Picture& have, const std::string& pic) {
  const dvpp::Picture src = source_of(j.cmd, j.file);
  const std::string from = j.from ? j.from->name : j.input;
  char line[240];
  double db = 0;
  switch (j.engine->codec->engine) {
    case DVPP_JPEGE:  // the JPEG decoded by TurboJPEG, against the picture encoded
      db = psnr(reference_picture(DVPP_JPEGD, j.output, src), src);
      std::snprintf(line, sizeof line,
                    "%u x %u %s from %s as a %zu-byte JPEG (quality %u); decoded, PSNR %.1f dB against it (least %g)",
                    src.width, src.height, dvpp::format_name(src.format), from.c_str(), j.output.size(), j.cmd.quality,
                    db, j.psnr_min);
      break;
    case DVPP_VENC: {  // the stream decoded by libavcodec, every frame against its source
      const auto stream = dvpp_stream(j.cmd.stream);
      const std::uint32_t n = j.host.frames;  // a command's (r.frames counts every repeat's)
      const dvpp::Picture decoded = video_reference(j.output, stream, src, n);
      const std::uint64_t got = decoded.bytes.size() / dvpp::picture_bytes(src.format, src.stride_w, src.stride_h);
      if (got < n) {
        r.passed = false;
        r.detail = "the stream decodes to " + std::to_string(got) + " of its " + std::to_string(n) + " frames";
        return;
      }
      db = psnr(decoded, src, n);
      std::snprintf(line, sizeof line,
                    "%u frame(s) of %u x %u %s from %s as a %zu-byte %s stream (qp %u, gop %u); decoded, PSNR %.1f dB "
                    "against them (least %g)",
                    n, src.width, src.height, dvpp::format_name(src.format), from.c_str(), j.output.size(),
                    stream == DVPP_STREAM_H264 ? "H.264" : "H.265", j.cmd.qp, j.cmd.gop, db, j.psnr_min);
      break;
    }
    default:  // VPC: its picture; a canvas with what later jobs pasted into it; a paste, its part
      db = j.into ? psnr_spans(have, vpc_reference(src, j.cmd, have), j.host.spans)
                  : psnr(have, canvas_reference(j, have));
      std::snprintf(line, sizeof line, "%s from %s; PSNR %.1f dB against a plain bilinear reference (least %g)",
                    pic.c_str(), from.c_str(), db, j.psnr_min);
  }
  r.passed = db >= j.psnr_min;
  r.detail = line;
}

unsigned MediaLauncher::save(const std::string& out_dir) {
  unsigned n = 0;
  for (auto& j : jobs_) {
    if (j->save.empty() || j->output.empty()) continue;
    const std::string path = out_dir + "/" + j->save;
    const dvpp::Picture& p = j->host.picture;
    if (extension_of(j->save) == ".png") {
      png_image img;
      std::memset(&img, 0, sizeof img);
      img.version = PNG_IMAGE_VERSION, img.width = p.width, img.height = p.height;
      img.format = p.format == DVPP_FMT_RGBA8888 ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
      const int pitch = int(dvpp::planes(p).at(0).pitch);
      if (!png_image_write_to_file(&img, path.c_str(), 0, j->output.data(), pitch, nullptr))
        throw OutputError("cannot write " + path + ": " + img.message);
    } else {
      std::ofstream f(path, std::ios::binary);
      f.write(reinterpret_cast<const char*>(j->output.data()), std::streamsize(j->output.size()));
      if (!f) throw OutputError("cannot write " + path);
    }
    ++n;
  }
  return n;
}

}  // namespace dvp::platform
