/*
 * CRC-32C (Castagnoli) for the C accelerator (part of pylogctl.format._speedups).
 *
 * Why here and not only through the crc32c package: a shallow dump checks one CRC per batch
 * (~62,000 per GiB), and calling a Python function from C for each costs more than the CRC of
 * a small batch; importing the package also costs ~15 ms of start-up (it loads
 * importlib.metadata). With the accelerator built, pylogctl.format.crc uses this function;
 * without it, the crc32c package. tests/format/test_fmt_speedups.py checks both agree.
 *
 * On x86-64 with SSE4.2 the CRC32 instruction runs three independent streams over long
 * blocks and joins them with precomputed "append N zero bytes" operators (GF(2) matrices
 * turned into byte tables), the usual way to hide the instruction's 3-cycle latency.
 * Elsewhere a slice-by-8 table loop does the work.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define POLY 0x82f63b78u  /* CRC-32C, reflected */
#define LONG_BLOCK 8192
#define SHORT_BLOCK 256

static uint32_t table8[8][256];
static uint32_t zeros_long[4][256], zeros_short[4][256];
static int have_hw;

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1)
            sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat) {
    for (int n = 0; n < 32; n++)
        square[n] = gf2_times(mat, mat[n]);
}

/* The operator that appends len zero bytes to a CRC (len a power of two >= 1). */
static void zeros_op(uint32_t *even, size_t len) {
    uint32_t odd[32], row = 1;
    odd[0] = POLY;  /* one zero bit */
    for (int n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    gf2_square(even, odd);  /* two zero bits */
    gf2_square(odd, even);  /* four zero bits */
    /* each squaring doubles the bits: the first one below gives one byte */
    do {
        gf2_square(even, odd);
        len >>= 1;
        if (len == 0)
            return;
        gf2_square(odd, even);
        len >>= 1;
    } while (len);
    memcpy(even, odd, sizeof(odd));
}

static void zeros_table(uint32_t zeros[4][256], size_t len) {
    uint32_t op[32];
    zeros_op(op, len);
    for (uint32_t n = 0; n < 256; n++) {
        zeros[0][n] = gf2_times(op, n);
        zeros[1][n] = gf2_times(op, n << 8);
        zeros[2][n] = gf2_times(op, n << 16);
        zeros[3][n] = gf2_times(op, n << 24);
    }
}

static inline uint32_t shift(uint32_t zeros[4][256], uint32_t crc) {
    return zeros[0][crc & 0xff] ^ zeros[1][(crc >> 8) & 0xff] ^ zeros[2][(crc >> 16) & 0xff]
        ^ zeros[3][crc >> 24];
}

/* crc is the running (inverted) register in both loops */
static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) {
        crc = table8[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        word ^= crc;  /* little-endian hosts; see crc32c_init's check */
        crc = table8[7][word & 0xff] ^ table8[6][(word >> 8) & 0xff]
            ^ table8[5][(word >> 16) & 0xff] ^ table8[4][(word >> 24) & 0xff]
            ^ table8[3][(word >> 32) & 0xff] ^ table8[2][(word >> 40) & 0xff]
            ^ table8[1][(word >> 48) & 0xff] ^ table8[0][word >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = table8[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

static int little_endian;

static uint32_t crc_sw_any(uint32_t crc, const unsigned char *p, size_t n) {
    if (little_endian)
        return crc_sw(crc, p, n);
    while (n--)
        crc = table8[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define HAVE_HW_PATH 1

__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n) {
    uint64_t c0 = crc, c1, c2;
    while (n && ((uintptr_t)p & 7)) {
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
        n--;
    }
    const size_t blocks[2] = {LONG_BLOCK, SHORT_BLOCK};
    for (int b = 0; b < 2; b++) {
        size_t len = blocks[b];
        uint32_t (*zeros)[256] = b == 0 ? zeros_long : zeros_short;
        while (n >= 3 * len) {
            c1 = c2 = 0;
            const unsigned char *end = p + len;
            do {
                uint64_t w0, w1, w2;
                memcpy(&w0, p, 8);
                memcpy(&w1, p + len, 8);
                memcpy(&w2, p + 2 * len, 8);
                c0 = _mm_crc32_u64(c0, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
                p += 8;
            } while (p < end);
            c0 = shift(zeros, (uint32_t)c0) ^ (uint32_t)c1;
            c0 = shift(zeros, (uint32_t)c0) ^ (uint32_t)c2;
            p += 2 * len;
            n -= 3 * len;
        }
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c0 = _mm_crc32_u64(c0, w);
        p += 8;
        n -= 8;
    }
    while (n--)
        c0 = _mm_crc32_u8((uint32_t)c0, *p++);
    return (uint32_t)c0;
}
#endif

uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
#ifdef HAVE_HW_PATH
    if (have_hw)
        return ~crc_hw(crc, p, n);
#endif
    return ~crc_sw_any(crc, p, n);
}

void pylogctl_crc32c_init(void) {
    uint16_t probe = 1;
    little_endian = *(unsigned char *)&probe == 1;
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = n;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ POLY : crc >> 1;
        table8[0][n] = crc;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = table8[0][n];
        for (int k = 1; k < 8; k++) {
            crc = table8[0][crc & 0xff] ^ (crc >> 8);
            table8[k][n] = crc;
        }
    }
    zeros_table(zeros_long, LONG_BLOCK);
    zeros_table(zeros_short, SHORT_BLOCK);
#ifdef HAVE_HW_PATH
    __builtin_cpu_init();
    have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

const char pylogctl_crc32c_doc[] =
"crc32c(data, value=0) -> int\n\n"
"CRC-32C of a buffer, continuing from value (the crc32c package's signature).";

PyObject *
pylogctl_crc32c_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "crc32c(data, value=0)");
        return NULL;
    }
    uint32_t value = 0;
    if (nargs == 2) {
        unsigned long v = PyLong_AsUnsignedLong(args[1]);
        if (v == (unsigned long)-1 && PyErr_Occurred())
            return NULL;
        value = (uint32_t)v;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    uint32_t crc;
    if (view.len > 65536) {
        Py_BEGIN_ALLOW_THREADS
        crc = pylogctl_crc32c(value, view.buf, (size_t)view.len);
        Py_END_ALLOW_THREADS
    } else {
        crc = pylogctl_crc32c(value, view.buf, (size_t)view.len);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

/* The table-driven path on its own, so tests cover it on machines with SSE4.2 too. */
PyObject *
pylogctl_crc32c_portable_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    int saved = have_hw;
    have_hw = 0;
    PyObject *out = pylogctl_crc32c_py(self, args, nargs);
    have_hw = saved;
    return out;
}
