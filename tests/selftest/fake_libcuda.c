/*
 * A fake libcuda.so for gpusetup's self-test tests: no GPU needed.
 *
 * It exports the CUDA driver API entry points gpusetup/selftest/cudadrv.py binds, with the C signatures of
 * cuda.h (CUDA 13.0), so argument types, pointer sizes and error paths are really exercised through ctypes.
 * Device memory is host memory; cuLaunchKernel runs a C implementation of the kernel found by the name given
 * to cuModuleGetFunction (which must appear as `.entry NAME` in the PTX text that was loaded). Time is
 * virtual: every copy and kernel advances a clock by bytes / simulated bandwidth (or flops / simulated
 * rate), and events record that clock, so measured numbers are deterministic.
 *
 * Variants (compile-time):
 *   -DFAKE_OLD_DRIVER        R384-era driver: CUDA 9.0, PTX ISA <= 6.0, no cuEventElapsedTime_v2 and no
 *                            cuDevicePrimaryCtxRelease_v2 (only the unversioned forms)
 *   -DFAKE_NO_MEM_V2         pre-CUDA-3.2 driver: no cuMemAlloc_v2
 *   -DFAKE_FAIL_FUNC=\"name\" -DFAKE_FAIL_CODE=n   that entry point returns CUresult n
 *   -DFAKE_CORRUPT_LAUNCH=n  the n-th sgemm_tiled launch (1-based) flips one bit of its output
 *   -DFAKE_CORRUPT_NAN       ... and writes a NaN instead
 *   -DFAKE_FREE_MB=n         the device reports (and enforces) only n MiB free
 *   -DFAKE_NO_DEVICE         cuInit returns CUDA_ERROR_NO_DEVICE
 * Simulated rates (environment, read at each call): FAKE_CUDA_H2D_GBPS, FAKE_CUDA_D2H_GBPS,
 *   FAKE_CUDA_PAGEABLE_GBPS, FAKE_CUDA_D2D_GBPS (one-way copy rate), FAKE_CUDA_SGEMM_TFLOPS.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef int CUdevice_attribute;
typedef int CUjit_option;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_PTX 218
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_NOT_FOUND 500

#ifndef FAKE_DEVICE_NAME
#define FAKE_DEVICE_NAME "NVIDIA GeForce RTX 4080 SUPER"
#endif
#ifndef FAKE_SM_COUNT
#define FAKE_SM_COUNT 80
#endif
#ifndef FAKE_CC_MAJOR
#define FAKE_CC_MAJOR 8
#endif
#ifndef FAKE_CC_MINOR
#define FAKE_CC_MINOR 9
#endif
#ifndef FAKE_CLOCK_KHZ
#define FAKE_CLOCK_KHZ 2550000
#endif
#ifndef FAKE_TOTAL_MB
#define FAKE_TOTAL_MB 16376
#endif
#ifndef FAKE_FREE_MB
#define FAKE_FREE_MB 14900
#endif
#ifdef FAKE_OLD_DRIVER
#define FAKE_DRIVER_VERSION 9000
#define FAKE_MAX_PTX_ISA 60
#else
#define FAKE_DRIVER_VERSION 13000
#define FAKE_MAX_PTX_ISA 90
#endif

/* ------------------------------------------------------------------------------------- fault points */
static int fail_here(const char *fn) {
#ifdef FAKE_FAIL_FUNC
    if (strcmp(fn, FAKE_FAIL_FUNC) == 0) return FAKE_FAIL_CODE;
#else
    (void)fn;
#endif
    return 0;
}
#define FAILPOINT(name) do { int _rc = fail_here(name); if (_rc) return _rc; } while (0)

/* ------------------------------------------------------------------------------------- state */
static int g_init = 0;
static double g_vclock = 0.0; /* seconds */
static size_t g_used = 0, g_peak_used = 0;
static long g_live_dev = 0, g_live_host = 0, g_live_streams = 0, g_live_events = 0, g_live_modules = 0;
static long g_ctx_refs = 0, g_sgemm_launches = 0, g_ops_since_record = 0;
static struct CUctx_st { int dummy; } g_ctx;

#define MAX_ALLOCS 4096
static struct { void *p; size_t n; int pinned; } g_allocs[MAX_ALLOCS];

static int track(void *p, size_t n, int pinned) {
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!g_allocs[i].p) { g_allocs[i].p = p; g_allocs[i].n = n; g_allocs[i].pinned = pinned; return 1; }
    return 0;
}
static int untrack(void *p, int pinned, size_t *n) {
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (g_allocs[i].p == p && g_allocs[i].pinned == pinned) { *n = g_allocs[i].n; g_allocs[i].p = NULL; return 1; }
    return 0;
}
/* Is [p, p+n) inside one allocation of the given kind? */
static int inside(const void *p, size_t n, int pinned) {
    for (int i = 0; i < MAX_ALLOCS; i++) {
        const char *b = (const char *)g_allocs[i].p;
        if (b && g_allocs[i].pinned == pinned && (const char *)p >= b && (const char *)p + n <= b + g_allocs[i].n)
            return 1;
    }
    return 0;
}
static double rate(const char *env, double dflt) {
    const char *v = getenv(env);
    return v ? atof(v) : dflt;
}
static void advance_bytes(size_t n, double gbps) { g_vclock += (double)n / (gbps * 1e9); }

/* Test helpers (not CUDA API). */
void fake_advance(double seconds) { g_vclock += seconds; g_ops_since_record++; }
long fake_live_objects(void) { return g_live_dev + g_live_host + g_live_streams + g_live_events + g_live_modules + g_ctx_refs; }
long fake_live_device_allocations(void) { return g_live_dev; }
unsigned long long fake_peak_used_bytes(void) { return g_peak_used; }
long fake_sgemm_launches(void) { return g_sgemm_launches; }
/* Work queued since the last cuEventRecord: > 0 means "copies are in flight" for a telemetry sample. */
long fake_ops_since_event_record(void) { return g_ops_since_record; }

/* ------------------------------------------------------------------------------------- init, device */
CUresult cuInit(unsigned int Flags) {
    FAILPOINT("cuInit");
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
#ifdef FAKE_NO_DEVICE
    return CUDA_ERROR_NO_DEVICE;
#endif
    g_init = 1;
    return CUDA_SUCCESS;
}
CUresult cuDriverGetVersion(int *v) { FAILPOINT("cuDriverGetVersion"); if (!v) return CUDA_ERROR_INVALID_VALUE; *v = FAKE_DRIVER_VERSION; return 0; }
CUresult cuDeviceGetCount(int *n) { FAILPOINT("cuDeviceGetCount"); if (!g_init) return CUDA_ERROR_NOT_INITIALIZED; *n = 1; return 0; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
    FAILPOINT("cuDeviceGet");
    if (!g_init) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
    return 0;
}
CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
    FAILPOINT("cuDeviceGetName");
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", FAKE_DEVICE_NAME);
    return 0;
}
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    FAILPOINT("cuDeviceGetAttribute");
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case 13: *pi = FAKE_CLOCK_KHZ; return 0;
    case 16: *pi = FAKE_SM_COUNT; return 0;
    case 18: *pi = 0; return 0;
    case 36: *pi = 11501000; return 0;
    case 37: *pi = 256; return 0;
    case 38: *pi = 64 * 1024 * 1024; return 0;
    case 40: *pi = 2; return 0;
    case 75: *pi = FAKE_CC_MAJOR; return 0;
    case 76: *pi = FAKE_CC_MINOR; return 0;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    FAILPOINT("cuDeviceTotalMem_v2");
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)FAKE_TOTAL_MB << 20;
    return 0;
}
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev) {
    FAILPOINT("cuDeviceGetPCIBusId");
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(pciBusId, (size_t)len, "0000:01:00.0");
    return 0;
}

/* ------------------------------------------------------------------------------------- contexts */
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    FAILPOINT("cuDevicePrimaryCtxRetain");
    if (!g_init) return CUDA_ERROR_NOT_INITIALIZED;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = &g_ctx;
    g_ctx_refs++;
    return 0;
}
static CUresult primary_release(CUdevice dev) {
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (g_ctx_refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    g_ctx_refs--;
    return 0;
}
#ifndef FAKE_OLD_DRIVER
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) { FAILPOINT("cuDevicePrimaryCtxRelease_v2"); return primary_release(dev); }
#endif
CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { FAILPOINT("cuDevicePrimaryCtxRelease"); return primary_release(dev); }
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
    FAILPOINT("cuCtxCreate_v2");
    (void)flags;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *pctx = &g_ctx;
    g_ctx_refs++;
    return 0;
}
CUresult cuCtxDestroy_v2(CUcontext ctx) { FAILPOINT("cuCtxDestroy_v2"); if (ctx != &g_ctx) return CUDA_ERROR_INVALID_CONTEXT; g_ctx_refs--; return 0; }
CUresult cuCtxSetCurrent(CUcontext ctx) { FAILPOINT("cuCtxSetCurrent"); if (ctx && ctx != &g_ctx) return CUDA_ERROR_INVALID_CONTEXT; return 0; }
CUresult cuCtxSynchronize(void) { FAILPOINT("cuCtxSynchronize"); return g_ctx_refs > 0 ? 0 : CUDA_ERROR_INVALID_CONTEXT; }

/* ------------------------------------------------------------------------------------- memory */
CUresult cuMemGetInfo_v2(size_t *free_b, size_t *total) {
    FAILPOINT("cuMemGetInfo_v2");
    if (g_ctx_refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    size_t f = (size_t)FAKE_FREE_MB << 20;
    *free_b = f > g_used ? f - g_used : 0;
    *total = (size_t)FAKE_TOTAL_MB << 20;
    return 0;
}
#ifndef FAKE_NO_MEM_V2
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
    FAILPOINT("cuMemAlloc_v2");
    if (g_ctx_refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (g_used + bytesize > ((size_t)FAKE_FREE_MB << 20)) return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = malloc(bytesize);
    if (!p || !track(p, bytesize, 0)) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    g_used += bytesize;
    if (g_used > g_peak_used) g_peak_used = g_used;
    g_live_dev++;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return 0;
}
#else
CUresult cuMemAlloc(unsigned int *dptr, unsigned int bytesize) { (void)dptr; (void)bytesize; return CUDA_ERROR_OUT_OF_MEMORY; }
#endif
CUresult cuMemFree_v2(CUdeviceptr dptr) {
    FAILPOINT("cuMemFree_v2");
    size_t n;
    if (!untrack((void *)(uintptr_t)dptr, 0, &n)) return CUDA_ERROR_INVALID_VALUE;
    free((void *)(uintptr_t)dptr);
    g_used -= n;
    g_live_dev--;
    return 0;
}
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
    FAILPOINT("cuMemHostAlloc");
    if (Flags & ~0x7u) return CUDA_ERROR_INVALID_VALUE;
    void *p = malloc(bytesize);
    if (!p || !track(p, bytesize, 1)) { free(p); return CUDA_ERROR_OUT_OF_MEMORY; }
    g_live_host++;
    *pp = p;
    return 0;
}
CUresult cuMemFreeHost(void *p) {
    FAILPOINT("cuMemFreeHost");
    size_t n;
    if (!untrack(p, 1, &n)) return CUDA_ERROR_INVALID_VALUE;
    free(p);
    g_live_host--;
    return 0;
}
static CUresult copy(void *dst, const void *src, size_t n, int dst_dev, int src_dev) {
    if (dst_dev && !inside(dst, n, 0)) return CUDA_ERROR_INVALID_VALUE;
    if (src_dev && !inside(src, n, 0)) return CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, src, n);
    g_ops_since_record++;
    if (dst_dev && src_dev) advance_bytes(n, rate("FAKE_CUDA_D2D_GBPS", 330.0));
    else {
        const void *host = dst_dev ? src : dst;
        int pinned = inside(host, n, 1);
        if (!pinned) advance_bytes(n, rate("FAKE_CUDA_PAGEABLE_GBPS", 11.0));
        else if (dst_dev) advance_bytes(n, rate("FAKE_CUDA_H2D_GBPS", 25.1));
        else advance_bytes(n, rate("FAKE_CUDA_D2H_GBPS", 26.3));
    }
    return 0;
}
#define DP(x) ((void *)(uintptr_t)(x))
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { FAILPOINT("cuMemcpyHtoD_v2"); return copy(DP(dst), src, n, 1, 0); }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { FAILPOINT("cuMemcpyDtoH_v2"); return copy(dst, DP(src), n, 0, 1); }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { FAILPOINT("cuMemcpyDtoD_v2"); return copy(DP(dst), DP(src), n, 1, 1); }
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) { (void)s; FAILPOINT("cuMemcpyHtoDAsync_v2"); return copy(DP(dst), src, n, 1, 0); }
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) { (void)s; FAILPOINT("cuMemcpyDtoHAsync_v2"); return copy(dst, DP(src), n, 0, 1); }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { (void)s; FAILPOINT("cuMemcpyDtoDAsync_v2"); return copy(DP(dst), DP(src), n, 1, 1); }
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int ui, size_t N) {
    FAILPOINT("cuMemsetD32_v2");
    if (!inside(DP(dst), N * 4, 0)) return CUDA_ERROR_INVALID_VALUE;
    unsigned int *p = DP(dst);
    for (size_t i = 0; i < N; i++) p[i] = ui;
    return 0;
}
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short us, size_t N) {
    FAILPOINT("cuMemsetD16_v2");
    if (!inside(DP(dst), N * 2, 0)) return CUDA_ERROR_INVALID_VALUE;
    unsigned short *p = DP(dst);
    for (size_t i = 0; i < N; i++) p[i] = us;
    return 0;
}

/* ------------------------------------------------------------------------------------- streams, events */
struct CUstream_st { int magic; };
struct CUevent_st { int magic; int recorded; double t; };
CUresult cuStreamCreate(CUstream *ph, unsigned int Flags) {
    FAILPOINT("cuStreamCreate");
    if (Flags > 1) return CUDA_ERROR_INVALID_VALUE;
    *ph = calloc(1, sizeof(struct CUstream_st));
    (*ph)->magic = 0x5757;
    g_live_streams++;
    return 0;
}
static CUresult stream_destroy(CUstream s) {
    if (!s || s->magic != 0x5757) return CUDA_ERROR_INVALID_HANDLE;
    s->magic = 0; free(s); g_live_streams--; return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) { FAILPOINT("cuStreamDestroy_v2"); return stream_destroy(s); }
CUresult cuStreamSynchronize(CUstream s) { FAILPOINT("cuStreamSynchronize"); if (s && s->magic != 0x5757) return CUDA_ERROR_INVALID_HANDLE; return 0; }
CUresult cuEventCreate(CUevent *ph, unsigned int Flags) {
    FAILPOINT("cuEventCreate");
    if (Flags > 0xf) return CUDA_ERROR_INVALID_VALUE;
    *ph = calloc(1, sizeof(struct CUevent_st));
    (*ph)->magic = 0xE7E7;
    g_live_events++;
    return 0;
}
CUresult cuEventRecord(CUevent e, CUstream s) {
    FAILPOINT("cuEventRecord");
    if (!e || e->magic != 0xE7E7) return CUDA_ERROR_INVALID_HANDLE;
    if (s && s->magic != 0x5757) return CUDA_ERROR_INVALID_HANDLE;
    e->recorded = 1; e->t = g_vclock;
    g_ops_since_record = 0;
    return 0;
}
CUresult cuEventSynchronize(CUevent e) { FAILPOINT("cuEventSynchronize"); return (e && e->magic == 0xE7E7) ? 0 : CUDA_ERROR_INVALID_HANDLE; }
static CUresult elapsed(float *ms, CUevent a, CUevent b) {
    if (!a || !b || a->magic != 0xE7E7 || b->magic != 0xE7E7) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return 600; /* CUDA_ERROR_NOT_READY */
    *ms = (float)((b->t - a->t) * 1000.0);
    return 0;
}
#ifndef FAKE_OLD_DRIVER
CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) { FAILPOINT("cuEventElapsedTime_v2"); return elapsed(ms, a, b); }
#endif
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { FAILPOINT("cuEventElapsedTime"); return elapsed(ms, a, b); }
static CUresult event_destroy(CUevent e) {
    if (!e || e->magic != 0xE7E7) return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0; free(e); g_live_events--; return 0;
}
CUresult cuEventDestroy_v2(CUevent e) { FAILPOINT("cuEventDestroy_v2"); return event_destroy(e); }

/* ------------------------------------------------------------------------------------- modules, kernels */
#define MAX_ENTRIES 16
struct CUmod_st { int magic; int n; char names[MAX_ENTRIES][64]; };
struct CUfunc_st { char name[64]; };

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, CUjit_option *options, void **optionValues) {
    FAILPOINT("cuModuleLoadDataEx");
    char *log = NULL; size_t logsz = 0;
    for (unsigned int i = 0; i < numOptions; i++) {
        if (options[i] == 5) log = optionValues[i];
        if (options[i] == 6) logsz = (size_t)(uintptr_t)optionValues[i];
    }
    const char *ptx = image;
    const char *v = strstr(ptx, "\n.version ");
    int major = 0, minor = 0;
    if (!v || sscanf(v, "\n.version %d.%d", &major, &minor) != 2 || !strstr(ptx, "\n.target sm_")) {
        if (log && logsz) snprintf(log, logsz, "ptxas fatal: not a PTX module (no .version/.target)");
        return CUDA_ERROR_INVALID_PTX;
    }
    if (major * 10 + minor > FAKE_MAX_PTX_ISA) {
        if (log && logsz) snprintf(log, logsz, "ptxas application ptx input, line 1; fatal : Unsupported .version %d.%d; current version is '%d.%d'",
                                   major, minor, FAKE_MAX_PTX_ISA / 10, FAKE_MAX_PTX_ISA % 10);
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
    struct CUmod_st *m = calloc(1, sizeof *m);
    m->magic = 0x3030;
    for (const char *p = strstr(ptx, ".entry "); p && m->n < MAX_ENTRIES; p = strstr(p + 7, ".entry ")) {
        sscanf(p + 7, "%63[A-Za-z0-9_]", m->names[m->n]);
        m->n++;
    }
    *module = m;
    g_live_modules++;
    return 0;
}
CUresult cuModuleUnload(CUmodule m) {
    FAILPOINT("cuModuleUnload");
    if (!m || m->magic != 0x3030) return CUDA_ERROR_INVALID_HANDLE;
    m->magic = 0; free(m); g_live_modules--; return 0;
}
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule m, const char *name) {
    FAILPOINT("cuModuleGetFunction");
    if (!m || m->magic != 0x3030) return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < m->n; i++)
        if (strcmp(m->names[i], name) == 0) {
            struct CUfunc_st *f = calloc(1, sizeof *f); /* leaked like the driver's: lives with the module */
            snprintf(f->name, sizeof f->name, "%s", name);
            *hfunc = f;
            return 0;
        }
    return CUDA_ERROR_NOT_FOUND;
}

static CUresult run_sgemm(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, void **p) {
    const float *A = DP(*(CUdeviceptr *)p[0]);
    const float *B = DP(*(CUdeviceptr *)p[1]);
    float *C = DP(*(CUdeviceptr *)p[2]);
    int M = *(int *)p[3], N = *(int *)p[4], K = *(int *)p[5];
    if (M <= 0 || N <= 0 || K <= 0 || M % 64 || N % 64 || K % 16) return CUDA_ERROR_INVALID_VALUE;
    if (gx != (unsigned)N / 64 || gy != (unsigned)M / 64 || gz != 1 || bx != 16 || by != 16 || bz != 1)
        return CUDA_ERROR_INVALID_VALUE;
    if (!inside(A, (size_t)M * K * 4, 0) || !inside(B, (size_t)K * N * 4, 0) || !inside(C, (size_t)M * N * 4, 0))
        return 700; /* CUDA_ERROR_ILLEGAL_ADDRESS, as the real GPU would report it */
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int k = 0; k < K; k++) acc = fmaf(A[(size_t)i * K + k], B[(size_t)k * N + j], acc);
            C[(size_t)i * N + j] = acc;
        }
    g_sgemm_launches++;
#ifdef FAKE_CORRUPT_LAUNCH
    if (g_sgemm_launches == FAKE_CORRUPT_LAUNCH) {
        size_t victim = ((size_t)M * N) / 3;
#ifdef FAKE_CORRUPT_NAN
        C[victim] = nanf("");
#else
        uint32_t bits; memcpy(&bits, &C[victim], 4); bits ^= 1u << 3; memcpy(&C[victim], &bits, 4);
#endif
    }
#endif
    g_vclock += 2.0 * M * N * K / (rate("FAKE_CUDA_SGEMM_TFLOPS", 14.0) * 1e12);
    return 0;
}
static CUresult run_compare(void **p) {
    const uint32_t *ref = DP(*(CUdeviceptr *)p[0]);
    const uint32_t *x = DP(*(CUdeviceptr *)p[1]);
    unsigned long long n = *(unsigned long long *)p[2];
    uint32_t *counts = DP(*(CUdeviceptr *)p[3]);
    if (!inside(ref, n * 4, 0) || !inside(x, n * 4, 0) || !inside(counts, 8, 0)) return 700;
    for (unsigned long long i = 0; i < n; i++) {
        uint32_t v = x[i];
        if (v != ref[i]) counts[0]++;
        if ((v & 0x7f800000u) == 0x7f800000u && (v & 0x007fffffu)) counts[1]++;
    }
    advance_bytes((size_t)n * 8, rate("FAKE_CUDA_D2D_GBPS", 330.0) * 2);
    return 0;
}
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra) {
    FAILPOINT("cuLaunchKernel");
    (void)sharedMemBytes;
    if (!f || !kernelParams || extra) return CUDA_ERROR_INVALID_VALUE;
    if (hStream && hStream->magic != 0x5757) return CUDA_ERROR_INVALID_HANDLE;
    g_ops_since_record++;
    if (strcmp(f->name, "sgemm_tiled") == 0)
        return run_sgemm(gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, kernelParams);
    if (strcmp(f->name, "compare_f32") == 0) return run_compare(kernelParams);
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuGetErrorName(CUresult error, const char **pStr) {
    (void)error; *pStr = "CUDA_ERROR_FAKE"; return 0;
}
