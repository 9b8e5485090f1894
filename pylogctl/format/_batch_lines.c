/*
 * format_v2_batch_lines -- the shallow dump's hot loop in C (part of pylogctl.format._speedups).
 *
 * Why: a shallow dump of a 1 GiB segment is ~62,000 batch lines. In Python each line costs
 * ~6 us (header unpack, a dict, an f-string), 5x the I/O floor; here it is ~0.2 us plus the
 * CRC, so the dump runs near `cat` speed.
 *
 * Contract: for a run of well-formed magic-2 batches with codec ids 0-4, the returned text is
 * exactly what formatters.text.batch_line(batch_to_dict(batch, position)) prints, one line
 * per batch. The loop stops, without raising, before the first batch it does not handle
 * itself: fewer than 61 bytes left, a size field below the v2 overhead, a batch running past
 * `end`, another magic, codec ids 5-7. The Python path then takes over at that position and
 * applies Kafka's rules (quiet stop, errors, legacy formats), so every message and position
 * still comes from one place. The CRC is _crc32c.c's, the same function pylogctl.format.crc
 * uses when the accelerator is built, over attributes..end as RecordBatch.is_valid does.
 *
 * tests/format/test_fmt_speedups.py compares both paths on the corpus and on generated
 * segments; a change to batch_line or batch_to_dict must be made here too.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_kafka_wire.h"

uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n);  /* _crc32c.c */

#define V2_OVERHEAD 61
#define LOG_OVERHEAD 12

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Text;

static int text_reserve(Text *t, Py_ssize_t extra) {
    if (t->len + extra <= t->cap)
        return 0;
    Py_ssize_t cap = t->cap ? t->cap : 1 << 16;
    while (cap < t->len + extra)
        cap *= 2;
    char *d = PyMem_Realloc(t->data, cap);
    if (d == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->data = d;
    t->cap = cap;
    return 0;
}

static inline void put(Text *t, const char *s, Py_ssize_t n) {
    memcpy(t->data + t->len, s, n);
    t->len += n;
}

#define PUTS(t, lit) put((t), (lit), (Py_ssize_t)sizeof(lit) - 1)

static inline void put_i64(Text *t, int64_t v) {
    char tmp[24];
    int n = 0;
    uint64_t u;
    if (v < 0) {
        t->data[t->len++] = '-';
        u = (uint64_t)0 - (uint64_t)v;
    } else {
        u = (uint64_t)v;
    }
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        t->data[t->len++] = tmp[--n];
}

static inline void put_bool(Text *t, int b) {
    if (b)
        PUTS(t, "true");
    else
        PUTS(t, "false");
}

/* formatters.text.batch_line, for one v2 batch header at p (position = its file position) */
static void put_line(Text *t, const unsigned char *p, int64_t position, int valid) {
    int64_t base_offset = (int64_t)kw_be64(p);
    int32_t length = (int32_t)kw_be32(p + 8);
    int32_t leader_epoch = (int32_t)kw_be32(p + 12);
    uint32_t crc = kw_be32(p + 17);
    int attrs = (int16_t)kw_be16(p + 21);
    int32_t last_delta = (int32_t)kw_be32(p + 23);
    int64_t base_ts = (int64_t)kw_be64(p + 27);
    int64_t max_ts = (int64_t)kw_be64(p + 35);
    int64_t producer_id = (int64_t)kw_be64(p + 43);
    int16_t producer_epoch = (int16_t)kw_be16(p + 51);
    int32_t base_seq = (int32_t)kw_be32(p + 53);
    int32_t count = (int32_t)kw_be32(p + 57);
    static const char *codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    int64_t last_seq;
    if (base_seq == -1)
        last_seq = -1;
    else if ((int64_t)base_seq > 0x7FFFFFFFLL - last_delta)  /* record.increment_sequence */
        last_seq = (int64_t)last_delta - (0x7FFFFFFFLL - base_seq) - 1;
    else
        last_seq = (int64_t)base_seq + last_delta;

    PUTS(t, "baseOffset: ");
    put_i64(t, base_offset);
    PUTS(t, " lastOffset: ");
    put_i64(t, (int64_t)((uint64_t)base_offset + (uint64_t)(int64_t)last_delta));  /* wraps as a Java long */
    PUTS(t, " count: ");
    put_i64(t, count);
    PUTS(t, " baseSequence: ");
    put_i64(t, base_seq);
    PUTS(t, " lastSequence: ");
    put_i64(t, last_seq);
    PUTS(t, " producerId: ");
    put_i64(t, producer_id);
    PUTS(t, " producerEpoch: ");
    put_i64(t, producer_epoch);
    PUTS(t, " partitionLeaderEpoch: ");
    put_i64(t, leader_epoch);
    PUTS(t, " isTransactional: ");
    put_bool(t, attrs & 0x10);
    PUTS(t, " isControl: ");
    put_bool(t, attrs & 0x20);
    PUTS(t, " deleteHorizonMs: ");
    if (attrs & 0x40) {
        PUTS(t, "OptionalLong[");
        put_i64(t, base_ts);
        PUTS(t, "]");
    } else {
        PUTS(t, "OptionalLong.empty");
    }
    PUTS(t, " position: ");
    put_i64(t, position);
    if (attrs & 0x08)
        PUTS(t, " LogAppendTime: ");
    else
        PUTS(t, " CreateTime: ");
    put_i64(t, max_ts);
    PUTS(t, " size: ");
    put_i64(t, (int64_t)length + LOG_OVERHEAD);
    PUTS(t, " magic: 2 compresscodec: ");
    const char *codec = codecs[attrs & 0x07];
    put(t, codec, (Py_ssize_t)strlen(codec));
    PUTS(t, " crc: ");
    put_i64(t, crc);
    PUTS(t, " isvalid: ");
    put_bool(t, valid);
    PUTS(t, "\n");
}

/* The longest line: 19 numbers of at most 20 characters plus ~330 of labels. */
#define MAX_LINE 1024

const char format_v2_batch_lines_doc[] =
"format_v2_batch_lines(buf, pos, end, max_batches)\n"
"    -> (text, next_pos, batches, invalid, first_invalid_pos or -1)\n\n"
"Kafka's batch lines for the run of plain magic-2 batches starting at pos; stops before\n"
"the first batch the Python path must handle (see _batch_lines.c).";

PyObject *
format_v2_batch_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "format_v2_batch_lines takes 4 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t max_batches = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len)
        end = view.len;
    const unsigned char *buf = view.buf;
    Text t = {NULL, 0, 0};
    Py_ssize_t batches = 0, invalid = 0, first_invalid = -1;
    PyObject *result = NULL;

    while (batches < max_batches && pos >= 0 && end - pos >= V2_OVERHEAD) {
        const unsigned char *p = buf + pos;
        int32_t length = (int32_t)kw_be32(p + 8);
        if (p[16] != 2 || length < V2_OVERHEAD - LOG_OVERHEAD
                || (Py_ssize_t)length > end - pos - LOG_OVERHEAD || ((int16_t)kw_be16(p + 21) & 0x07) > 4)
            break;
        /* CRC-32C of attributes..end, as RecordBatch.is_valid computes it */
        uint32_t computed = pylogctl_crc32c(0, p + 21, (size_t)length - 9);
        int valid = computed == kw_be32(p + 17);
        if (!valid && invalid++ == 0)
            first_invalid = pos;
        if (text_reserve(&t, MAX_LINE) < 0)
            goto done;
        put_line(&t, p, pos, valid);
        pos += (Py_ssize_t)length + LOG_OVERHEAD;
        batches++;
    }
    {
        PyObject *text = PyUnicode_New(t.len, 127);
        if (text == NULL)
            goto done;
        if (t.len)
            memcpy(PyUnicode_1BYTE_DATA(text), t.data, t.len);
        result = Py_BuildValue("(Nnnnn)", text, pos, batches, invalid, first_invalid);
    }
done:
    PyMem_Free(t.data);
    PyBuffer_Release(&view);
    return result;
}
