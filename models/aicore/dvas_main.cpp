// SPDX-License-Identifier: MIT
// dvas: DV assembly text -> kernel image.   dvas input.s -o output.dvk    dvas --help | --version
#include <fstream>
#include <iostream>
#include <sstream>

#include "aicore/assembler.hpp"
#include "common/error.hpp"
#include "common/version.hpp"

int main(int argc, char** argv) {
  std::string in, out;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      out = argv[++i];
    else if (a == "-h" || a == "--help") {
      std::cout << "usage: dvas INPUT.s [-o OUTPUT.dvk]   (default output: INPUT with .dvk)\n"
                   "       dvas --version\n";
      return 0;
    } else if (a == "--version") {
      std::cout << "dvas " << dvp::version() << " (" << dvp::revision() << ")\n";
      return 0;
    } else if (in.empty())
      in = a;
    else {
      std::cerr << "dvas: unexpected argument '" << a << "'\n";
      return 2;
    }
  }
  if (in.empty()) {
    std::cerr << "usage: dvas INPUT.s [-o OUTPUT.dvk]\n";
    return 2;
  }
  if (out.empty()) out = in.substr(0, in.rfind('.')) + ".dvk";
  try {
    std::ifstream f(in);
    if (!f) throw dvp::Error(in + ": cannot open");
    std::stringstream ss;
    ss << f.rdbuf();
    dvp::aicore::assemble(ss.str(), in).save(out);
  } catch (const dvp::Error& e) {
    std::cerr << "dvas: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
