// SPDX-License-Identifier: MIT
// dvdis: kernel image -> DV assembly text (which dvas turns back into the same image).
//   dvdis IMAGE.dvk        dvdis --isa   (the ISA reference, docs/isa.md)    dvdis --help | --version
#include <iostream>

#include "aicore/assembler.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

static const char* kUsage =
    "usage: dvdis IMAGE.dvk   print the kernel image as DV assembly (dvas takes it back)\n"
    "       dvdis --isa       print the ISA reference (markdown)\n"
    "       dvdis --version\n";

int main(int argc, char** argv) {
  const std::string a = argc == 2 ? argv[1] : "";
  if (a == "--isa") {
    std::cout << dvp::aicore::isa_markdown();
    return 0;
  }
  if (a == "--help" || a == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (a == "--version") {
    std::cout << "dvdis " << dvp::version() << " (" << dvp::revision() << ")\n";
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-') {
    std::cerr << (argc > 2 ? "dvdis: unexpected argument '" + std::string(argv[2]) + "'\n" : std::string()) << kUsage;
    return 2;
  }
  try {
    std::cout << dvp::aicore::disassemble(dvp::aicore::Image::load(argv[1]));
  } catch (const dvp::Error& e) {
    std::cerr << "dvdis: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
