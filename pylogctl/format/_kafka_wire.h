/*
 * _kafka_wire.h -- the Kafka wire helpers shared by the optional C extensions: big-endian
 * fields, pylogctl.format.varint's zig-zag varints, int64 overflow checks and the
 * "exact int within int64" argument conversion.
 *
 * One copy for pylogctl.format._speedups (_speedups.c, _recover_scan.c, _batch_lines.c),
 * pylogctl.storage._cleaner_scan and pylogctl.groups._offsets_scan: every function is
 * `static inline`, so each module gets its own. Include it after <Python.h>. setup.py lists
 * it in each Extension's depends, so a change rebuilds all three.
 */

#ifndef PYLOGCTL_KAFKA_WIRE_H
#define PYLOGCTL_KAFKA_WIRE_H

#include <stdint.h>

#define KW_INT32_MAX 0x7FFFFFFFLL

/* -- big-endian fields ---------------------------------------------------------------------- */

static inline uint16_t
kw_be16(const unsigned char *p)
{
    return (uint16_t)(((uint16_t)p[0] << 8) | p[1]);
}

static inline uint32_t
kw_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t
kw_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static inline void
kw_put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

static inline void
kw_put64(unsigned char *p, uint64_t v)
{
    kw_put32(p, (uint32_t)(v >> 32));
    kw_put32(p + 4, (uint32_t)v);
}

/* -- zig-zag varints (pylogctl.format.varint) ------------------------------------------------- */

/* What kw_read_varint found. */
enum {
    KW_VARINT_OK = 0,        /* *out and *ppos set */
    KW_VARINT_TRUNCATED,     /* `end` reached before the last byte ("Truncated varint") */
    KW_VARINT_TOO_LONG,      /* max_bytes bytes, the last with its high bit set */
    KW_VARINT_WIDE,          /* a whole varint (10-byte form) whose raw value needs more than
                              * 64 bits, which Python reads as a big int: *ppos is set past it
                              * and *out to the zig-zag decoding of its low 64 bits */
};

/*
 * read_varint(buf, pos, max_bytes) over d[*ppos:end]. *ppos and *out are left alone unless
 * the result is KW_VARINT_OK or KW_VARINT_WIDE. A varint that is both wide and too long is
 * KW_VARINT_TOO_LONG (Python raises "too long" before it looks at the value).
 */
static inline int
kw_read_varint(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, int max_bytes,
               int64_t *out)
{
    Py_ssize_t pos = *ppos;
    if (pos < end && d[pos] < 0x80) {  /* the usual one-byte case */
        uint64_t raw = d[pos];
        *out = (int64_t)((raw >> 1) ^ (0 - (raw & 1)));
        *ppos = pos + 1;
        return KW_VARINT_OK;
    }
    Py_ssize_t start = pos;
    uint64_t raw = 0;
    int shift = 0, wide = 0;
    for (;;) {
        if (pos >= end)
            return KW_VARINT_TRUNCATED;
        unsigned char b = d[pos++];
        uint64_t bits = b & 0x7F;
        if (shift == 63 && bits > 1)
            wide = 1;
        raw |= bits << shift;
        if (b < 0x80)
            break;
        shift += 7;
        if (pos - start >= max_bytes)
            return KW_VARINT_TOO_LONG;
    }
    *out = (int64_t)((raw >> 1) ^ (0 - (raw & 1)));
    *ppos = pos;
    return wide ? KW_VARINT_WIDE : KW_VARINT_OK;
}

static inline uint64_t
kw_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* Bytes of write_varint(v). */
static inline Py_ssize_t
kw_varint_size(int64_t v)
{
    uint64_t raw = kw_zigzag(v);
    Py_ssize_t n = 1;
    while (raw >= 0x80) {
        raw >>= 7;
        n++;
    }
    return n;
}

/* write_varint(v) at p; returns the byte after it. */
static inline unsigned char *
kw_write_varint(unsigned char *p, int64_t v)
{
    uint64_t raw = kw_zigzag(v);
    while (raw >= 0x80) {
        *p++ = (unsigned char)((raw & 0x7F) | 0x80);
        raw >>= 7;
    }
    *p++ = (unsigned char)raw;
    return p;
}

/* -- int64 arithmetic --------------------------------------------------------------------- */

/* a + b into *r, or 1 when the sum leaves int64 (portable __builtin_add_overflow). */
static inline int
kw_add_overflows(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b))
        return 1;
    *r = a + b;
    return 0;
}

/* a - b into *r, or 1 when the difference leaves int64. */
static inline int
kw_sub_overflows(int64_t a, int64_t b, int64_t *r)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
        return 1;
    *r = a - b;
    return 0;
}

/* An exact Python int (not a bool, not a subclass) within int64: 1 with *out set; 0
 * otherwise, no exception left. */
static inline int
kw_as_int64(PyObject *obj, int64_t *out)
{
    if (!PyLong_CheckExact(obj))
        return 0;
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow || (v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    *out = (int64_t)v;
    return 1;
}

#endif /* PYLOGCTL_KAFKA_WIRE_H */
