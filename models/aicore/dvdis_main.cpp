// dvdis: kernel image -> DV assembly text (which dvas turns back into the same image).
//   dvdis IMAGE.dvk        dvdis --isa   (the ISA reference, docs/isa.md)
#include <iostream>

#include "aicore/assembler.hpp"
#include "common/error.hpp"

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--isa") {
    std::cout << dvp::aicore::isa_markdown();
    return 0;
  }
  if (argc != 2 || argv[1][0] == '-') {
    std::cerr << "usage: dvdis IMAGE.dvk | dvdis --isa\n";
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
