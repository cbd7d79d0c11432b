// SPDX-License-Identifier: MIT
#include "model.hpp"

#include <dlfcn.h>

#include <cstring>

#include "common/error.hpp"

namespace dvp::rtl {

std::uint64_t Pin::get() const {
  std::uint64_t v = 0;
  std::memcpy(&v, p_->data, p_->bytes < 8 ? p_->bytes : 8);
  return v;
}

void Pin::set(std::uint64_t v) const {
  if (p_->bits < 64) v &= (std::uint64_t(1) << p_->bits) - 1;
  if (p_->bytes > 8) std::memset(p_->data, 0, p_->bytes);
  std::memcpy(p_->data, &v, p_->bytes < 8 ? p_->bytes : 8);
}

void Pin::get_bytes(std::uint8_t* out, unsigned n) const { std::memcpy(out, p_->data, n); }

// Only whole bytes of a port are set this way (data buses and strobes are multiples of 8 bits
// wide, or the strobe's byte is masked here), so no bit above the port's width is ever set.
void Pin::set_bytes(const std::uint8_t* in, unsigned n) const {
  std::memcpy(p_->data, in, n);
  if (p_->bits % 8) static_cast<std::uint8_t*>(p_->data)[p_->bits / 8] &= std::uint8_t((1u << (p_->bits % 8)) - 1);
}

Model::Model(const std::string& path, const std::string& name) : path_(path) {
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) throw Error("rtl " + name + ": cannot load plug-in " + path + ": " + dlerror(), kExitConfig);
  auto entry = reinterpret_cast<dvp_rtl_plugin_fn>(dlsym(lib_, "dvp_rtl_plugin"));
  if (!entry)
    throw Error("rtl " + name + ": " + path +
                    " is not a davinci-vp RTL plug-in (no dvp_rtl_plugin(); build it with "
                    "dvp-verilate)",
                kExitConfig);
  api_ = entry();
  if (!api_ || api_->abi_version != DVP_RTL_ABI_VERSION)
    throw Error("rtl " + name + ": " + path + " was built for plug-in ABI " +
                    std::to_string(api_ ? api_->abi_version : 0) + ", this platform reads ABI " +
                    std::to_string(DVP_RTL_ABI_VERSION) + ": rebuild it with this dvp-verilate",
                kExitConfig);
  inst_ = api_->create(name.c_str());
  const dvp_rtl_port* p = nullptr;
  const std::size_t n = api_->ports(inst_, &p);
  ports_.assign(p, p + n);
  for (std::size_t i = 0; i < n; ++i) by_name_[ports_[i].name] = i;
}

Model::~Model() {
  finish();
  if (inst_) api_->destroy(inst_);
  // The library stays loaded: static destructors in it may still be registered with atexit.
}

std::string Model::port_names() const {
  std::string s;
  for (const dvp_rtl_port& p : ports_) s += std::string(s.empty() ? "" : ", ") + p.name;
  return s;
}

Pin Model::pin(const std::string& n) const {
  auto it = by_name_.find(n);
  return it == by_name_.end() ? Pin() : Pin(&ports_[it->second]);
}

void Model::trace_open(const std::string& path) {
  if (api_->trace_open(inst_, path.c_str()) != 0)
    throw Error("rtl: cannot write waveform " + path + " (plug-in " + path_ +
                    " built without FST tracing, or the file "
                    "cannot be created)",
                kExitOutput);
  tracing_ = true;
}

void Model::finish() {
  if (finished_ || !inst_) return;
  finished_ = true;
  api_->finish(inst_);
}

}  // namespace dvp::rtl
