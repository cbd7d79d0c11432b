// SPDX-License-Identifier: MIT
// fst-info: reads an FST waveform with GTKWave's own reader (fstapi, as Verilator ships it) and
// prints its time range and, for each signal named on the command line (full hierarchical name,
// dots), how many times it changed. Exit 0 when the file opens and every named signal is in
// it, 1 otherwise. The RTL tests use it to show that a waveform the platform wrote opens in the
// waveform viewer's library and holds the activity the run had.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "fstapi.h"
}

namespace {

void count_change(void* user, uint64_t, fstHandle h, const unsigned char*) {
  ++(*static_cast<std::map<fstHandle, unsigned long>*>(user))[h];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: fst-info FILE.fst [scope.signal ...]\n");
    return 2;
  }
  void* fst = fstReaderOpen(argv[1]);
  if (!fst) {
    std::fprintf(stderr, "fst-info: %s: not an FST waveform (or unreadable)\n", argv[1]);
    return 1;
  }
  std::map<std::string, fstHandle> handles;
  std::vector<std::string> scope;
  while (fstHier* h = fstReaderIterateHier(fst)) {
    if (h->htyp == FST_HT_SCOPE) scope.emplace_back(h->u.scope.name);
    if (h->htyp == FST_HT_UPSCOPE && !scope.empty()) scope.pop_back();
    if (h->htyp != FST_HT_VAR) continue;
    std::string full;
    for (const std::string& s : scope) full += s + ".";
    handles[full + h->u.var.name] = h->u.var.handle;
  }
  std::printf("%s: %llu signals, time %llu to %llu (10^%d s)\n", argv[1], (unsigned long long)handles.size(),
              (unsigned long long)fstReaderGetStartTime(fst), (unsigned long long)fstReaderGetEndTime(fst),
              int(fstReaderGetTimescale(fst)));
  int rc = 0;
  std::map<fstHandle, unsigned long> changes;
  fstReaderClrFacProcessMaskAll(fst);
  for (int i = 2; i < argc; ++i) {
    auto it = handles.find(argv[i]);
    if (it == handles.end()) {
      std::printf("%s: no such signal\n", argv[i]);
      rc = 1;
      continue;
    }
    fstReaderSetFacProcessMask(fst, it->second);
  }
  fstReaderIterBlocks(fst, count_change, &changes, nullptr);
  for (int i = 2; i < argc; ++i)
    if (auto it = handles.find(argv[i]); it != handles.end())
      std::printf("%s: %lu changes\n", argv[i], changes[it->second]);
  fstReaderClose(fst);
  return rc;
}
