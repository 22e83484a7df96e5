// gpusetup self-test kernels (driver tier). Compiled to PTX by regenerate.sh; the PTX, not this file, is
// shipped and loaded at run time with cuModuleLoadDataEx, so the test needs only the NVIDIA driver.
// Keep the code to instructions that exist in PTX ISA 6.0 / sm_50, so drivers from R384 on can JIT it.
//
// sgemm_tiled: C = A * B, row-major FP32, M and N multiples of 64, K a multiple of 16.
//   Grid (N/64, M/64), block (16, 16): each thread computes a 4x4 patch with a stride of 16.
// compare_f32: gpu-burn style check: counts[0] += words that differ bit for bit from ref,
//   counts[1] += words that are NaN.

#define TM 64
#define TN 64
#define TK 16

extern "C" __global__ void __launch_bounds__(256)
sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
            int M, int N, int K)
{
    __shared__ float As[TK][TM];
    __shared__ float Bs[TK][TN];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int tid = ty * 16 + tx;
    const int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TK) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int idx = tid + i * 256;
            const int am = idx / TK, ak = idx % TK;
            As[ak][am] = A[(size_t)(row0 + am) * K + k0 + ak];
            const int bk = idx / TN, bn = idx % TN;
            Bs[bk][bn] = B[(size_t)(k0 + bk) * N + col0 + bn];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TK; ++k) {
            float a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[k][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[k][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            C[(size_t)(row0 + ty + 16 * i) * N + col0 + tx + 16 * j] = acc[i][j];
}

extern "C" __global__ void
compare_f32(const unsigned int* __restrict__ ref, const unsigned int* __restrict__ x,
            unsigned long long n, unsigned int* counts)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned int v = x[i];
        if (v != ref[i]) atomicAdd(&counts[0], 1u);
        if ((v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu) != 0u) atomicAdd(&counts[1], 1u);
    }
}
