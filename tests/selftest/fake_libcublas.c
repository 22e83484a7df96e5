/*
 * A fake libcublas.so for the self-test's cuBLAS tier, linked against fake_libcuda.so (whose device
 * pointers are host pointers and whose virtual clock it advances). Signatures as in cublas_api.h:
 * cublasCreate_v2, cublasDestroy_v2, cublasSetStream_v2, cublasGetVersion_v2, cublasSgemm_v2, cublasGemmEx.
 * Computes the real column-major product (FP32, FP16, BF16 storage; FP32 accumulate), so the tier's
 * "product of ones equals K" check is exercised. Simulated rates (TFLOP/s, environment):
 * FAKE_CUBLAS_FP32_TFLOPS, FAKE_CUBLAS_TF32_TFLOPS, FAKE_CUBLAS_FP16_TFLOPS, FAKE_CUBLAS_BF16_TFLOPS.
 * -DFAKE_CUBLAS_FAIL_CREATE: cublasCreate_v2 returns CUBLAS_STATUS_NOT_INITIALIZED.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
typedef struct cublasContext { int magic; void *stream; int version; } *cublasHandle_t;
typedef struct CUstream_st *cudaStream_t;
extern void fake_advance(double seconds);

static double rate(const char *env, double dflt) { const char *v = getenv(env); return v ? atof(v) : dflt; }

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
#ifdef FAKE_CUBLAS_FAIL_CREATE
    (void)handle; return 1;
#else
    *handle = calloc(1, sizeof(struct cublasContext));
    (*handle)->magic = 0xB1A5;
    return 0;
#endif
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) { if (!h || h->magic != 0xB1A5) return 1; h->magic = 0; free(h); return 0; }
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) { if (!h || h->magic != 0xB1A5) return 1; h->stream = s; return 0; }
cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *v) { if (!h || h->magic != 0xB1A5) return 1; *v = 130100; return 0; }

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0) { float f = ldexpf((float)man, -24); return sign ? -f : f; }
    if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
    else bits = sign | ((exp + 112) << 23) | (man << 13);
    float f; memcpy(&f, &bits, 4); return f;
}
static uint16_t float_to_half(float f) { /* exact for the small integers the tests produce */
    uint32_t bits; memcpy(&bits, &f, 4);
    uint32_t sign = (bits >> 16) & 0x8000; int exp = (int)((bits >> 23) & 0xff) - 127 + 15; uint32_t man = (bits >> 13) & 0x3ff;
    if (f == 0.0f) return (uint16_t)sign;
    if (exp >= 31) return (uint16_t)(sign | 0x7c00);
    if (exp <= 0) return (uint16_t)sign;
    return (uint16_t)(sign | ((uint32_t)exp << 10) | man);
}
static float bf16_to_float(uint16_t h) { uint32_t bits = (uint32_t)h << 16; float f; memcpy(&f, &bits, 4); return f; }
static uint16_t float_to_bf16(float f) { uint32_t bits; memcpy(&bits, &f, 4); return (uint16_t)(bits >> 16); }

static float load(const void *p, int type, size_t i) {
    if (type == 0) return ((const float *)p)[i];
    if (type == 2) return half_to_float(((const uint16_t *)p)[i]);
    return bf16_to_float(((const uint16_t *)p)[i]);
}
static void store(void *p, int type, size_t i, float v) {
    if (type == 0) ((float *)p)[i] = v;
    else if (type == 2) ((uint16_t *)p)[i] = float_to_half(v);
    else ((uint16_t *)p)[i] = float_to_bf16(v);
}
static cublasStatus_t gemm(int ta, int tb, int m, int n, int k, float alpha, const void *A, int at, int lda,
                           const void *B, int bt, int ldb, float beta, void *C, int ct, int ldc) {
    if (ta != 0 || tb != 0) return 15; /* NOT_SUPPORTED: only N,N here */
    if (m <= 0 || n <= 0 || k <= 0 || lda < m || ldb < k || ldc < m) return 7;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < m; i++) {
            float acc = 0.0f;
            for (int p = 0; p < k; p++) acc += load(A, at, (size_t)i + (size_t)p * lda) * load(B, bt, (size_t)p + (size_t)j * ldb);
            float old = beta != 0.0f ? load(C, ct, (size_t)i + (size_t)j * ldc) : 0.0f;
            store(C, ct, (size_t)i + (size_t)j * ldc, alpha * acc + beta * old);
        }
    return 0;
}
cublasStatus_t cublasSgemm_v2(cublasHandle_t h, int transa, int transb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, const float *B, int ldb, const float *beta, float *C, int ldc) {
    if (!h || h->magic != 0xB1A5) return 1;
    cublasStatus_t rc = gemm(transa, transb, m, n, k, *alpha, A, 0, lda, B, 0, ldb, *beta, C, 0, ldc);
    if (!rc) fake_advance(2.0 * m * n * k / (rate("FAKE_CUBLAS_FP32_TFLOPS", 32.0) * 1e12));
    return rc;
}
cublasStatus_t cublasGemmEx(cublasHandle_t h, int transa, int transb, int m, int n, int k, const void *alpha,
                            const void *A, int Atype, int lda, const void *B, int Btype, int ldb, const void *beta,
                            void *C, int Ctype, int ldc, int computeType, int algo) {
    (void)algo;
    if (!h || h->magic != 0xB1A5) return 1;
    if (computeType != 68 && computeType != 77) return 15;
    if (Atype != Btype || Atype != Ctype || (Atype != 0 && Atype != 2 && Atype != 14)) return 15;
    cublasStatus_t rc = gemm(transa, transb, m, n, k, *(const float *)alpha, A, Atype, lda, B, Btype, ldb,
                             *(const float *)beta, C, Ctype, ldc);
    const char *env = Atype == 2 ? "FAKE_CUBLAS_FP16_TFLOPS" : Atype == 14 ? "FAKE_CUBLAS_BF16_TFLOPS" :
                      computeType == 77 ? "FAKE_CUBLAS_TF32_TFLOPS" : "FAKE_CUBLAS_FP32_TFLOPS";
    double dflt = Atype == 0 ? (computeType == 77 ? 50.0 : 32.0) : 110.0;
    if (!rc) fake_advance(2.0 * m * n * k / (rate(env, dflt) * 1e12));
    return rc;
}
