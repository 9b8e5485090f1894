/*
 * pylogctl.tools._batch_lines -- format_v2_batch_lines, the shallow dump's hot loop in C, and
 * its deep counterparts (dump_log_segments.py): an optional extension built by setup.py;
 * PYLOGCTL_NO_SPEEDUPS=1 turns it off (pylogctl/speedups.py).
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

#include "../format/_kafka_wire.h"

uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n);  /* _crc32c.c */
void pylogctl_crc32c_init(void);

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

static const char format_v2_batch_lines_doc[] =
"format_v2_batch_lines(buf, pos, end, max_batches)\n"
"    -> (text, next_pos, batches, invalid, first_invalid_pos or -1)\n\n"
"Kafka's batch lines for the run of plain magic-2 batches starting at pos; stops before\n"
"the first batch the Python path must handle (see _batch_lines.c).";

static PyObject *
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

/*
 * format_v2_record_lines -- the deep dump's hot loop (--deep-iteration, --print-data-log).
 *
 * Why: printing a 1 GiB segment's ~1M records through Python (a Record, a dict and a line per
 * record, then a UTF-8 encode of ~1.1 GB of text) cost twice Kafka's tool; here each record
 * line is written straight into a bytes object that the text formatter hands to the binary
 * stdout.
 *
 * Contract: for a run of magic-2 batches that are uncompressed, not control batches, pass their
 * CRC and whose records decode cleanly, the returned bytes are exactly the UTF-8 encoding of
 * what formatters.text prints for them through the Python path (batch_to_dict, record_to_dict
 * with the string decoder or none, record_line). A batch is all or nothing: anything the Python
 * path would print differently or reject -- a record that does not decode cleanly (any error
 * DefaultRecord.readFrom would raise, a varlong wider than 64 bits), an offset or timestamp
 * leaving int64 -- rolls the output back to the batch's start and ends the run there, so the
 * Python path prints that batch with its own rules and messages. Keys, values and header keys
 * are printed as java_string.java_utf8 decodes them (Java's U+FFFD for malformed UTF-8).
 * The checks are stricter than the Python decoder's (every read is bounded by the record's own
 * size), never looser: a batch rendered here is one Python decodes to the same values.
 *
 * tests/tools/test_dump_deep_lines.py compares both paths on the corpus and on generated
 * segments; a change to record_line or record_to_dict must be made here too.
 */

/* The bytes a record line needs besides its key, value and header keys (labels, 5 numbers of
 * at most 20 characters, the separators) -- with room to spare. */
#define RECORD_FIXED 256
/* Stop a run once this much text is rendered: the caller writes it out between calls. */
#define OUT_BUDGET (1 << 20)

enum { PRINT_KEY = 1, PRINT_VALUE = 2 };

#define PUT_FFFD(t) PUTS((t), "\xef\xbf\xbd")
#define CONT(b) (((b) & 0xC0) == 0x80)

/* java_string._malformed4_2: the second byte of a 4-byte sequence is wrong. */
static inline int
malformed4_2(unsigned b1, unsigned b2)
{
    return (b1 == 0xF0 && !(b2 >= 0x90 && b2 <= 0xBF)) || (b1 == 0xF4 && (b2 & 0xF0) != 0x80)
           || !CONT(b2);
}

/*
 * The UTF-8 bytes of java_string.java_utf8(s[0:n]), what the text formatter writes for a key,
 * value or header key: well-formed UTF-8 as it is, malformed input replaced by U+FFFD by the
 * JDK's rules, which java_string.py restates and this restates line for line (a truncated
 * sequence at the end is one U+FFFD, an encoded surrogate one U+FFFD, ...). Writes at most
 * 3n bytes (one U+FFFD per input byte at worst); the caller reserves them.
 */
static void
put_java_utf8(Text *t, const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t sp = 0;
    while (sp < n) {
        Py_ssize_t run = sp;
        while (n - run >= 8) {  /* ASCII, eight bytes at a time */
            uint64_t w;
            memcpy(&w, s + run, 8);
            if (w & 0x8080808080808080ULL)
                break;
            run += 8;
        }
        while (run < n && s[run] < 0x80)
            run++;
        if (run > sp) {
            put(t, (const char *)s + sp, run - sp);
            sp = run;
            if (sp >= n)
                break;
        }
        unsigned b1 = s[sp++];
        if (b1 >= 0xC2 && b1 <= 0xDF) {  /* two bytes */
            if (sp < n) {
                if (CONT(s[sp])) {
                    put(t, (const char *)s + sp - 1, 2);
                    sp++;
                }
                else {
                    PUT_FFFD(t);
                }
                continue;
            }
            PUT_FFFD(t);
            break;
        }
        else if (b1 >= 0xE0 && b1 <= 0xEF) {  /* three bytes */
            if (sp + 1 < n) {
                unsigned b2 = s[sp], b3 = s[sp + 1];
                int bad2 = (b1 == 0xE0 && (b2 & 0xE0) == 0x80) || !CONT(b2);
                if (bad2 || !CONT(b3)) {
                    PUT_FFFD(t);
                    sp += bad2 ? 0 : 1;
                }
                else {
                    unsigned c = ((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F);
                    if (c >= 0xD800 && c <= 0xDFFF)
                        PUT_FFFD(t);
                    else
                        put(t, (const char *)s + sp - 1, 3);
                    sp += 2;
                }
                continue;
            }
            if (sp < n && ((b1 == 0xE0 && (s[sp] & 0xE0) == 0x80) || !CONT(s[sp]))) {
                PUT_FFFD(t);
                continue;
            }
            PUT_FFFD(t);  /* a truncated sequence ends the text with one replacement */
            break;
        }
        else if (b1 >= 0xF0 && b1 <= 0xF7) {  /* four bytes */
            if (sp + 2 < n) {
                unsigned b2 = s[sp], b3 = s[sp + 1], b4 = s[sp + 2];
                uint32_t uc = ((b1 & 0x07u) << 18) | ((b2 & 0x3Fu) << 12) | ((b3 & 0x3Fu) << 6)
                              | (b4 & 0x3Fu);
                if (!(CONT(b2) && CONT(b3) && CONT(b4)) || uc < 0x10000 || uc > 0x10FFFF) {
                    PUT_FFFD(t);
                    /* java_string._malformed4_skip */
                    if (!(b1 > 0xF4 || malformed4_2(b1, b2)))
                        sp += CONT(b3) ? 2 : 1;
                }
                else {
                    put(t, (const char *)s + sp - 1, 4);
                    sp += 3;
                }
                continue;
            }
            if (b1 > 0xF4 || (sp < n && malformed4_2(b1, s[sp]))) {
                PUT_FFFD(t);
                continue;
            }
            sp++;
            PUT_FFFD(t);
            if (sp < n && !CONT(s[sp]))
                continue;
            break;
        }
        else {  /* a continuation byte or C0, C1, F8..FF as a lead */
            PUT_FFFD(t);
        }
    }
}

/* A zig-zag varint of at most max_bytes within [*ppos, end) that Python reads as the same
 * int64: 1 with *out and *ppos set, 0 otherwise. */
static inline int
varint_in(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, int max_bytes, int64_t *out)
{
    return kw_read_varint(d, end, ppos, max_bytes, out) == KW_VARINT_OK;
}

/* A nullable key or value length: -1 or 0..room. */
static inline int
nullable_len_in(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, int64_t *n)
{
    return varint_in(d, end, ppos, 5, n) && *n >= -1 && *n <= end - *ppos;
}

typedef struct {
    int64_t *pairs;  /* (previous offset, offset) for each non-consecutive offset */
    Py_ssize_t len, cap;
} Gaps;

static int
gaps_add(Gaps *g, int64_t prev, int64_t next)
{
    if (g->len == g->cap) {
        Py_ssize_t cap = g->cap ? g->cap * 2 : 16;
        int64_t *p = PyMem_Realloc(g->pairs, (size_t)cap * 2 * sizeof(int64_t));
        if (p == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        g->pairs = p;
        g->cap = cap;
    }
    g->pairs[2 * g->len] = prev;
    g->pairs[2 * g->len + 1] = next;
    g->len++;
    return 0;
}

typedef struct {
    int64_t base_offset, base_ts, max_ts;
    int32_t base_seq, count;
    int log_append_time, flags;
} BatchInfo;

/*
 * The record lines of one batch's record area d[0:end]. 0: rendered; 1: the Python path must
 * print this batch (the caller rolls back); -1: an exception is set.
 */
static int
put_records(Text *t, const unsigned char *d, Py_ssize_t end, const BatchInfo *b,
            int64_t *last, Gaps *gaps)
{
    Py_ssize_t pos = 0;
    int64_t v;
    for (int32_t i = 0; i < b->count; i++) {
        if (!varint_in(d, end, &pos, 5, &v) || v < 0 || v > end - pos)
            return 1;
        const Py_ssize_t rec_end = pos + (Py_ssize_t)v;
        /* keys, value and header keys fill at most v bytes, 3v once every byte is a U+FFFD;
           the commas between header keys are fewer than v / 2 */
        if ((Py_ssize_t)v > (PY_SSIZE_T_MAX - RECORD_FIXED) / 4 - t->len)
            return 1;
        if (text_reserve(t, RECORD_FIXED + 4 * (Py_ssize_t)v) < 0)
            return -1;
        if (pos >= rec_end)
            return 1;
        pos++;  /* attributes */
        int64_t ts_delta, off_delta, klen, vlen, hcount;
        if (!varint_in(d, rec_end, &pos, 10, &ts_delta)
                || !varint_in(d, rec_end, &pos, 5, &off_delta))
            return 1;
        if (!nullable_len_in(d, rec_end, &pos, &klen))
            return 1;
        const unsigned char *key = d + pos;
        if (klen > 0)
            pos += (Py_ssize_t)klen;
        if (!nullable_len_in(d, rec_end, &pos, &vlen))
            return 1;
        const unsigned char *value = d + pos;
        if (vlen > 0)
            pos += (Py_ssize_t)vlen;
        if (!varint_in(d, rec_end, &pos, 5, &hcount) || hcount < 0 || hcount > rec_end - pos)
            return 1;
        int64_t offset, ts, seq;
        if (kw_add_overflows(b->base_offset, off_delta, &offset))
            return 1;
        if (b->log_append_time)
            ts = b->max_ts;
        else if (kw_add_overflows(b->base_ts, ts_delta, &ts))
            return 1;
        if (b->base_seq >= 0) {
            seq = (int64_t)b->base_seq + off_delta;
            if (seq > KW_INT32_MAX)
                seq -= 0x80000000LL;
        }
        else {
            seq = -1;
        }
        if (*last == INT64_MAX || offset != *last + 1) {
            if (gaps_add(gaps, *last, offset) < 0)
                return -1;
        }
        *last = offset;

        PUTS(t, "| offset: ");
        put_i64(t, offset);
        if (b->log_append_time)
            PUTS(t, " LogAppendTime: ");
        else
            PUTS(t, " CreateTime: ");
        put_i64(t, ts);
        PUTS(t, " keySize: ");
        put_i64(t, klen);
        PUTS(t, " valueSize: ");
        put_i64(t, vlen);
        PUTS(t, " sequence: ");
        put_i64(t, seq);
        PUTS(t, " headerKeys: [");
        for (int64_t h = 0; h < hcount; h++) {
            int64_t hk, hv;
            if (!varint_in(d, rec_end, &pos, 5, &hk) || hk < 0 || hk > rec_end - pos)
                return 1;
            if (h)
                PUTS(t, ",");
            put_java_utf8(t, d + pos, (Py_ssize_t)hk);
            pos += (Py_ssize_t)hk;
            if (!nullable_len_in(d, rec_end, &pos, &hv))
                return 1;
            if (hv > 0)
                pos += (Py_ssize_t)hv;
        }
        PUTS(t, "]");
        if (pos != rec_end)
            return 1;
        if ((b->flags & PRINT_KEY) && klen >= 0) {
            PUTS(t, " key: ");
            put_java_utf8(t, key, (Py_ssize_t)klen);
        }
        if ((b->flags & PRINT_VALUE) && vlen >= 0) {
            PUTS(t, " payload: ");
            put_java_utf8(t, value, (Py_ssize_t)vlen);
        }
        PUTS(t, "\n");
    }
    return pos == end ? 0 : 1;
}

/*
 * The batch line of the v2 batch header at p (file position pos, CRC checked by the caller)
 * and the record lines of its (decompressed) record area. 0: rendered; 1: the Python path must
 * print this batch, and t, *last and gaps are as they were; -1: an exception is set.
 */
static int
put_batch(Text *t, const unsigned char *p, Py_ssize_t pos, const unsigned char *area,
          Py_ssize_t area_len, int flags, int64_t *last, Gaps *gaps)
{
    int attrs = (int16_t)kw_be16(p + 21);
    BatchInfo b;
    b.base_offset = (int64_t)kw_be64(p);
    b.base_ts = (int64_t)kw_be64(p + 27);
    b.max_ts = (int64_t)kw_be64(p + 35);
    b.base_seq = (int32_t)kw_be32(p + 53);
    b.count = (int32_t)kw_be32(p + 57);
    b.log_append_time = (attrs & 0x08) != 0;
    b.flags = flags;
    if (b.count < 0)
        return 1;
    Py_ssize_t mark = t->len, gaps_mark = gaps->len;
    int64_t last_mark = *last;
    if (text_reserve(t, MAX_LINE) < 0)
        return -1;
    put_line(t, p, pos, 1);
    int rc = put_records(t, area, area_len, &b, last, gaps);
    if (rc > 0) {
        t->len = mark;
        gaps->len = gaps_mark;
        *last = last_mark;
    }
    return rc;
}

/* The non-consecutive offsets as [(prev, offset), ...], or None when there are none. */
static PyObject *
gaps_list(const Gaps *g)
{
    if (!g->len)
        return Py_NewRef(Py_None);
    PyObject *pairs = PyList_New(g->len);
    if (pairs == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < g->len; i++) {
        PyObject *pair = Py_BuildValue("(LL)", (long long)g->pairs[2 * i],
                                       (long long)g->pairs[2 * i + 1]);
        if (pair == NULL) {
            Py_DECREF(pairs);
            return NULL;
        }
        PyList_SET_ITEM(pairs, i, pair);
    }
    return pairs;
}

static const char format_v2_record_lines_doc[] =
"format_v2_record_lines(buf, pos, end, max_batches, last_offset, flags)\n"
"    -> (text: bytes, next_pos, batches, last_offset, [(prev, offset), ...] or None)\n\n"
"Kafka's batch and record lines (UTF-8) for the run of plain magic-2 batches starting at pos;\n"
"flags: 1 prints keys, 2 payloads (the string decoder). The list holds the non-consecutive\n"
"offsets seen after last_offset. Stops before the first batch the Python path must print\n"
"(see _batch_lines.c).";

static PyObject *
format_v2_record_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "format_v2_record_lines takes 6 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = PyLong_AsSsize_t(args[2]);
    Py_ssize_t max_batches = PyLong_AsSsize_t(args[3]);
    long long last_ll = PyLong_AsLongLong(args[4]);
    long flags = PyLong_AsLong(args[5]);
    if (PyErr_Occurred())
        return NULL;
    int64_t last = (int64_t)last_ll;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (end > view.len)
        end = view.len;
    const unsigned char *buf = view.buf;
    Text t = {NULL, 0, 0};
    Gaps gaps = {NULL, 0, 0};
    Py_ssize_t batches = 0;
    PyObject *result = NULL;

    while (batches < max_batches && t.len < OUT_BUDGET && pos >= 0 && end - pos >= V2_OVERHEAD) {
        const unsigned char *p = buf + pos;
        int32_t length = (int32_t)kw_be32(p + 8);
        int attrs = (int16_t)kw_be16(p + 21);
        if (p[16] != 2 || length < V2_OVERHEAD - LOG_OVERHEAD
                || (Py_ssize_t)length > end - pos - LOG_OVERHEAD || (attrs & 0x27) != 0)
            break;  /* not v2, truncated, compressed or a control batch */
        if (pylogctl_crc32c(0, p + 21, (size_t)length - 9) != kw_be32(p + 17))
            break;
        int rc = put_batch(&t, p, pos, p + V2_OVERHEAD,
                           (Py_ssize_t)length + LOG_OVERHEAD - V2_OVERHEAD, (int)flags, &last,
                           &gaps);
        if (rc < 0)
            goto done;
        if (rc > 0)  /* the Python path prints this batch */
            break;
        pos += (Py_ssize_t)length + LOG_OVERHEAD;
        batches++;
    }
    {
        PyObject *pairs = gaps_list(&gaps);
        if (pairs == NULL)
            goto done;
        PyObject *text = PyBytes_FromStringAndSize(t.data ? t.data : "", t.len);
        if (text == NULL) {
            Py_DECREF(pairs);
            goto done;
        }
        result = Py_BuildValue("(NnnLN)", text, pos, batches, (long long)last, pairs);
    }
done:
    PyMem_Free(t.data);
    PyMem_Free(gaps.pairs);
    PyBuffer_Release(&view);
    return result;
}

static const char format_v2_batch_area_lines_doc[] =
"format_v2_batch_area_lines(buf, pos, area, last_offset, flags)\n"
"    -> (text: bytes, last_offset, [(prev, offset), ...] or None) or None\n\n"
"format_v2_record_lines for the one v2 batch at pos whose record area, decompressed, is area\n"
"(a compressed batch); None when the Python path must print it.";

static PyObject *
format_v2_batch_area_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "format_v2_batch_area_lines takes 5 arguments");
        return NULL;
    }
    Py_ssize_t pos = PyLong_AsSsize_t(args[1]);
    long long last_ll = PyLong_AsLongLong(args[3]);
    long flags = PyLong_AsLong(args[4]);
    if (PyErr_Occurred())
        return NULL;
    int64_t last = (int64_t)last_ll;
    Py_buffer view, area;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (PyObject_GetBuffer(args[2], &area, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    Text t = {NULL, 0, 0};
    Gaps gaps = {NULL, 0, 0};
    PyObject *result = NULL;
    const unsigned char *p = (const unsigned char *)view.buf + pos;
    int32_t length;
    if (pos < 0 || view.len - pos < V2_OVERHEAD || p[16] != 2
            || (length = (int32_t)kw_be32(p + 8)) < V2_OVERHEAD - LOG_OVERHEAD
            || (Py_ssize_t)length > view.len - pos - LOG_OVERHEAD
            || ((int16_t)kw_be16(p + 21) & 0x20) || ((int16_t)kw_be16(p + 21) & 0x07) > 4
            || pylogctl_crc32c(0, p + 21, (size_t)length - 9) != kw_be32(p + 17)) {
        /* not v2, truncated, a control batch, codec ids 5-7 or a bad CRC */
        result = Py_NewRef(Py_None);
        goto done;
    }
    int rc = put_batch(&t, p, pos, area.buf, area.len, (int)flags, &last, &gaps);
    if (rc < 0)
        goto done;
    if (rc > 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *pairs = gaps_list(&gaps);
    if (pairs == NULL)
        goto done;
    PyObject *text = PyBytes_FromStringAndSize(t.data ? t.data : "", t.len);
    if (text == NULL) {
        Py_DECREF(pairs);
        goto done;
    }
    result = Py_BuildValue("(NLN)", text, (long long)last, pairs);
done:
    PyMem_Free(t.data);
    PyMem_Free(gaps.pairs);
    PyBuffer_Release(&area);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef batch_lines_methods[] = {
    {"format_v2_batch_lines", (PyCFunction)(void (*)(void))format_v2_batch_lines, METH_FASTCALL,
     format_v2_batch_lines_doc},
    {"format_v2_record_lines", (PyCFunction)(void (*)(void))format_v2_record_lines, METH_FASTCALL,
     format_v2_record_lines_doc},
    {"format_v2_batch_area_lines", (PyCFunction)(void (*)(void))format_v2_batch_area_lines,
     METH_FASTCALL, format_v2_batch_area_lines_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef batch_lines_module = {
    PyModuleDef_HEAD_INIT,
    "pylogctl.tools._batch_lines",
    "Optional C renderer of dump-segment's batch and record lines over plain magic-2 batches.",
    -1,
    batch_lines_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__batch_lines(void)
{
    pylogctl_crc32c_init();
    return PyModule_Create(&batch_lines_module);
}
