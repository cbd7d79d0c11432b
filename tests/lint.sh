#!/bin/sh
# SPDX-License-Identifier: MIT
# lint.sh format|tidy SOURCE BUILD: the house rules hold on the tree.
#   format: every C and C++ file is as clang-format (.clang-format) lays it out;
#   tidy:   the C++ of models/, platform/, network/, study/ and firmware/kernels/ passes the checks of .clang-tidy
#           (BUILD/compile_commands.json gives each file's flags);
#   layers: each model folder includes only what docs/architecture.md's layer table allows;
#   spdx:   every source, build and script file names its licence (SPDX-License-Identifier: MIT,
#           LICENSE) in its first lines.
# Generated files (firmware/bsp/soc_regs.h) are left out.
set -u
what=$1; src=$2; build=$3
cd "$src" || exit 1
files() {  # tracked files when this is a git checkout, else what is on disk
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then git ls-files "$@"; else
    for p in "$@"; do find . -path "./$p" | sed 's|^\./||'; done
  fi
}
case $what in
  format)
    files '*.cpp' '*.hpp' '*.c' '*.h' | grep -v 'firmware/bsp/soc_regs.h' |
      xargs clang-format --dry-run --Werror || { echo "run: clang-format -i on the files above"; exit 1; }
    echo "ok: every C and C++ file is formatted" ;;
  tidy)
    [ -f "$build/compile_commands.json" ] || { echo "no $build/compile_commands.json"; exit 1; }
    files 'models/*.cpp' 'platform/*.cpp' 'network/*.cpp' 'study/*.cpp' 'firmware/kernels/*.cpp' |
      xargs -P2 -n6 clang-tidy -p "$build" --quiet 2>/dev/null > "$build/clang-tidy.log"
    if grep -E "(warning|error):" "$build/clang-tidy.log"; then exit 1; fi
    echo "ok: the checks of .clang-tidy pass" ;;
  layers)
    # folder: the folders it may include besides itself and common (docs/architecture.md)
    bad=0
    while read -r folder allowed; do
      for f in $(files "$folder/*.cpp" "$folder/*.hpp"); do
        for inc in $(grep -o '^#include "[a-z_]*/' "$f" | sed 's/#include "//; s|/||'); do
          case " $(basename "$folder") common $allowed " in *" $inc "*) ;; *) echo "$f includes $inc/"; bad=1 ;; esac
        done
      done
    done <<TABLE
models/common
models/tlmcheck
models/mmio tlmcheck
models/ring tlmcheck
models/cache
models/dram
models/irq mmio
models/uart mmio
models/simctrl mmio
models/timer mmio irq
models/tgen
models/aicore mmio
models/cpu irq cache
models/ts mmio irq aicore
models/dvpp mmio irq
models/rtl irq
models/vecacc mmio irq
firmware/kernels aicore
TABLE
    [ $bad = 0 ] || { echo "an include outside the layer table of docs/architecture.md"; exit 1; }
    echo "ok: every folder includes within its layers" ;;
  spdx)
    missing=$(files '*.cpp' '*.hpp' '*.c' '*.h' '*.S' '*.ld' '*.sh' '*.py' '*.cmake' '*CMakeLists.txt' |
      while read -r f; do head -3 "$f" | grep -q 'SPDX-License-Identifier: MIT' || echo "$f"; done)
    [ -z "$missing" ] || { echo "no SPDX-License-Identifier line in:"; echo "$missing"; exit 1; }
    echo "ok: every source names its licence" ;;
  *) echo "usage: lint.sh format|tidy|layers|spdx SOURCE BUILD"; exit 2 ;;
esac
