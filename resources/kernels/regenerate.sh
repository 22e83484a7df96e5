#!/usr/bin/env bash
# Regenerate selftest.ptx from selftest.cu and prove it assembles.
#
# nvcc emits the PTX ISA of its own release (CUDA 13: .version 9.0, .target sm_75 at the lowest), which
# drivers older than that release refuse (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). The kernels use only
# instructions that exist in PTX ISA 6.0 on sm_50, so the header is lowered to `.version 6.0` /
# `.target sm_50` (JIT-able by every driver from R384 / CUDA 9.0 on), then ptxas assembles the result for
# the lowest architecture it still supports and for a current one, which fails if any instruction is too new.
#
# Usage: resources/kernels/regenerate.sh   (needs nvcc and ptxas on PATH or under /usr/local/cuda/bin)
set -euo pipefail
cd "$(dirname "$0")"
PATH="$PATH:/usr/local/cuda/bin"
NVCC=${NVCC:-nvcc}
PTXAS=${PTXAS:-ptxas}

# Lowest virtual architecture this nvcc accepts (compute_50 on CUDA <= 12, compute_75 on CUDA 13).
lowest=""
for arch in 50 52 60 70 75; do
    if "$NVCC" -ptx -arch="compute_$arch" -o /dev/null selftest.cu 2>/dev/null; then lowest=$arch; break; fi
done
[ -n "$lowest" ] || { echo "nvcc cannot build for any of compute_50..75" >&2; exit 1; }

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.cubin"' EXIT
"$NVCC" -ptx -O3 -arch="compute_$lowest" -o "$tmp" selftest.cu
{
    echo "// gpusetup self-test kernels, generated from selftest.cu by regenerate.sh."
    echo "// $("$NVCC" --version | tail -1); header lowered from compute_$lowest to .version 6.0 / .target sm_50."
    sed -e 's/^\.version .*/.version 6.0/' -e 's/^\.target .*/.target sm_50/' "$tmp"
} > selftest.ptx

# Prove it: assemble for the lowest real architecture ptxas knows and for sm_90.
archs=$("$PTXAS" --help | sed -n '/Allowed values/,/Default value/p' | tr -c 'a-z0-9_' '\n' | grep -E '^sm_[0-9]+$' | sort -t_ -k2 -n -u)
low=$(echo "$archs" | head -1)
for a in "$low" sm_90; do
    "$PTXAS" -arch="$a" -o "$tmp.cubin" selftest.ptx
    echo "selftest.ptx assembles for $a"
done
