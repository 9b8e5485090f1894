/*
 * pylogctl.storage.cleaner._cleaner_scan -- optional C loops for the log cleaner's two passes
 * over a
 * plain v2 batch (magic 2, uncompressed, not a control batch).
 *
 * Why: compaction reads every record twice, once to map keys to their latest offsets
 * (Cleaner.buildOffsetMap) and once to keep or drop each record while copying
 * (Cleaner.cleanInto / MemoryRecords.filterTo). In Python both passes decode every record into
 * objects (values and headers included) and the copy re-encodes the kept records of every
 * batch that lost one, record by record: several times the cost of reading the log once. For
 * a plain batch the work needs no objects but the keys: this file walks the record area in
 * place (prefetching the batch, as its records are found one from the other), looks keys up
 * for the copy in a frozen copy of the map (key_table: one memory access per key where the
 * dict takes three), and writes the batch Kafka writes straight into the output bytearray.
 *
 * Contract: what these functions do is exactly what the Python path does for the same batch
 * (pylogctl.storage.cleaner.offset_map.SkimpyOffsetMap.put_records for map_batch, and
 * pylogctl.format.record_filter.filter_to with the CleanerFilter for filter_batch): the same
 * dict updates, the same kept records, the same output bytes (record attributes written as 0,
 * timestamp deltas against the first kept record's timestamp or the delete horizon, canonical
 * varints, the batch's last offset delta, a fresh CRC-32C). Whenever a batch is anything but
 * well formed -- a record the Python decoder would reject, a field crossing its record's
 * declared size, a 64-bit overflow, a header key that is not strict UTF-8 (Python would
 * decode it with replacement characters and re-encode those) -- or the map is near its
 * budget, they return NotImplemented *before changing anything*, and the caller runs the
 * Python path on that batch, which then produces the data or the error. Every read is
 * bounds-checked against the record it belongs to, so hostile bytes cannot read outside the
 * buffer. tests/storage/test_cleaner_accel.py compares both paths byte for byte and
 * tests/fuzz/fuzz_cleaner.py on mutated batches.
 *
 * Built by setup.py as an optional extension; PYLOGCTL_NO_SPEEDUPS=1 turns it off.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../format/_kafka_wire.h"

/* _crc32c.c (pylogctl/format), compiled into this module too */
uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n);
void pylogctl_crc32c_init(void);

#define BATCH_OVERHEAD 61
#define LOG_OVERHEAD 12
#define CRC_OFFSET 17
#define ATTRIBUTES_OFFSET 21
#define CODEC_MASK 0x07
#define TIMESTAMP_TYPE_FLAG 0x08
#define TRANSACTIONAL_FLAG 0x10
#define CONTROL_FLAG 0x20
#define DELETE_HORIZON_FLAG 0x40
#define NO_TIMESTAMP (-1)

#define HAND_OVER 1  /* "let the Python path take this batch" */

/* -- varints: read_varint with "let Python take it" for every failure ---------------------- */

/* read_varint(buf, pos, max_bytes) within [*ppos, end): 0 with *out and *ppos set, HAND_OVER
 * (both left alone) when truncated, too long, or (10-byte form) wider than 64 bits. */
static inline int
read_varint(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, int max_bytes,
            int64_t *out)
{
    Py_ssize_t pos = *ppos;
    int64_t v;
    if (kw_read_varint(d, end, &pos, max_bytes, &v) != KW_VARINT_OK)
        return HAND_OVER;
    *out = v;
    *ppos = pos;
    return 0;
}

/* -- the batch ------------------------------------------------------------------------------ */

typedef struct {
    const unsigned char *p;   /* the batch's first byte */
    Py_ssize_t size;          /* length + 12 */
    int64_t base_offset, last_offset, base_timestamp, max_timestamp;
    int attributes;
    int32_t count;
} batch_t;

typedef struct {
    int64_t offset, timestamp, off_delta;
    Py_ssize_t key, key_len;      /* key_len -1: null */
    Py_ssize_t value, value_len;  /* likewise */
    Py_ssize_t headers;           /* position of the header count */
    int64_t header_count;
    Py_ssize_t headers_size;      /* of the header block re-encoded with canonical varints */
} rec_t;

/* The batch at ``position`` of ``buf``, if it is a whole plain v2 batch (else HAND_OVER). */
static int
batch_at(const Py_buffer *buf, Py_ssize_t position, batch_t *b)
{
    if (position < 0 || position > buf->len - BATCH_OVERHEAD)
        return HAND_OVER;
    const unsigned char *p = (const unsigned char *)buf->buf + position;
    int32_t length = (int32_t)kw_be32(p + 8);
    if (length < BATCH_OVERHEAD - LOG_OVERHEAD || length > buf->len - position - LOG_OVERHEAD)
        return HAND_OVER;
    if (p[16] != 2)
        return HAND_OVER;
    b->attributes = (int)(int16_t)((p[21] << 8) | p[22]);
    if (b->attributes & (CODEC_MASK | CONTROL_FLAG))
        return HAND_OVER;
    b->p = p;
    b->size = (Py_ssize_t)length + LOG_OVERHEAD;
    b->base_offset = (int64_t)kw_be64(p);
    int32_t last_offset_delta = (int32_t)kw_be32(p + 23);
    /* RecordBatch.last_offset: a Java long sum, wrapping */
    b->last_offset = (int64_t)((uint64_t)b->base_offset + (uint64_t)(int64_t)last_offset_delta);
    b->base_timestamp = (int64_t)kw_be64(p + 27);
    b->max_timestamp = (int64_t)kw_be64(p + 35);
    b->count = (int32_t)kw_be32(p + 57);
    return 0;
}

/* A strictly valid UTF-8 string (Python's decoder, no replacement): decode/encode round-trip
 * to the same bytes. */
static int
is_strict_utf8(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    while (i < n && s[i] < 0x80)
        i++;
    if (i == n)
        return 1;
    PyObject *u = PyUnicode_DecodeUTF8((const char *)s, n, NULL);
    if (u == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(u);
    return 1;
}

/* A key or value: varint length, -1 for null, then the bytes, all within the record. */
static inline int
read_blob(const unsigned char *d, Py_ssize_t rec_end, Py_ssize_t *ppos, Py_ssize_t *at,
          Py_ssize_t *len)
{
    int64_t n;
    if (read_varint(d, rec_end, ppos, 5, &n))
        return HAND_OVER;
    if (n == -1) {
        *at = *ppos;
        *len = -1;
        return 0;
    }
    if (n < 0 || n > rec_end - *ppos)
        return HAND_OVER;
    *at = *ppos;
    *len = (Py_ssize_t)n;
    *ppos += (Py_ssize_t)n;
    return 0;
}

/*
 * Walk the ``count`` records of the batch's area (decode_records' rules: each record's size
 * varint, then attributes, timestamp delta, offset delta, key, value, headers, ending exactly
 * at its declared size; nothing after the last) into ``*precs`` (grown as records are read, so
 * a hostile count costs nothing). 0 when walked, HAND_OVER on anything else, -1 with
 * MemoryError. ``check_keys``: also hand over when a header key is not strict UTF-8.
 */
static int
walk_records(const batch_t *b, rec_t **precs, int check_keys)
{
    const unsigned char *d = b->p;
    Py_ssize_t pos = BATCH_OVERHEAD, end = b->size;
    int lat = b->attributes & TIMESTAMP_TYPE_FLAG;
    int32_t capacity = 0;
    /* every record takes at least 7 bytes: more than that fit is an error in Python */
    if (b->count < 0 || b->count > (end - BATCH_OVERHEAD) / 7)
        return HAND_OVER;
    /* the record headers are ~1 KiB apart, each found from the one before: ask for the
     * whole batch at once rather than wait for one cache miss after the other */
    for (Py_ssize_t at = 0; at < end; at += 64)
        __builtin_prefetch(d + at);
    for (int32_t i = 0; i < b->count; i++) {
        if (i == capacity) {
            capacity = capacity ? (capacity > b->count / 2 ? b->count : 2 * capacity)
                                : (b->count < 64 ? b->count : 64);
            rec_t *grown = PyMem_Realloc(*precs, sizeof(rec_t) * (size_t)capacity);
            if (grown == NULL) {
                PyErr_NoMemory();
                return -1;
            }
            *precs = grown;
        }
        rec_t *r = &(*precs)[i];
        int64_t size, ts_delta;
        if (read_varint(d, end, &pos, 5, &size) || size < 0 || size > end - pos)
            return HAND_OVER;
        Py_ssize_t rec_end = pos + (Py_ssize_t)size;
        if (pos >= rec_end)
            return HAND_OVER;
        pos++;  /* attributes: rewritten as 0 */
        if (read_varint(d, rec_end, &pos, 10, &ts_delta)
                || read_varint(d, rec_end, &pos, 5, &r->off_delta))
            return HAND_OVER;
        if (kw_add_overflows(b->base_offset, r->off_delta, &r->offset))
            return HAND_OVER;
        if (lat)
            r->timestamp = b->max_timestamp;
        else if (kw_add_overflows(b->base_timestamp, ts_delta, &r->timestamp))
            return HAND_OVER;
        if (read_blob(d, rec_end, &pos, &r->key, &r->key_len)
                || read_blob(d, rec_end, &pos, &r->value, &r->value_len))
            return HAND_OVER;
        r->headers = pos;
        if (read_varint(d, rec_end, &pos, 5, &r->header_count)
                || r->header_count < 0 || r->header_count > rec_end - pos)
            return HAND_OVER;
        Py_ssize_t hsize = kw_varint_size(r->header_count);
        for (int64_t h = 0; h < r->header_count; h++) {
            Py_ssize_t kat, klen, vat, vlen;
            if (read_blob(d, rec_end, &pos, &kat, &klen) || klen < 0
                    || read_blob(d, rec_end, &pos, &vat, &vlen))
                return HAND_OVER;
            if (check_keys && !is_strict_utf8(d + kat, klen))
                return HAND_OVER;
            hsize += kw_varint_size(klen) + klen + (vlen < 0 ? 1 : kw_varint_size(vlen) + vlen);
        }
        if (pos != rec_end)
            return HAND_OVER;
        r->headers_size = hsize;
    }
    return pos == end ? 0 : HAND_OVER;
}

/* The batch's records, or NULL: *rc HAND_OVER when they are not walkable, -1 with an
 * exception. */
static rec_t *
records_of(const batch_t *b, int check_keys, int *rc)
{
    rec_t *recs = NULL;
    *rc = walk_records(b, &recs, check_keys);
    if (*rc == 0 && recs == NULL)  /* no record */
        recs = PyMem_Malloc(sizeof(rec_t));
    if (*rc != 0 || recs == NULL) {
        PyMem_Free(recs);
        if (*rc == 0) {
            *rc = -1;
            PyErr_NoMemory();
        }
        return NULL;
    }
    return recs;
}

static PyObject *
not_implemented(void)
{
    Py_RETURN_NOTIMPLEMENTED;
}

/* -- the offset map pass -------------------------------------------------------------------- */

static const char map_batch_doc[] =
"map_batch(buf, position, offsets, start, max_entries)\n"
"    -> (count, new_keys, last) | NotImplemented\n\n"
"SkimpyOffsetMap.put_records' bulk update for the plain v2 batch at ``position`` of ``buf``:\n"
"when the map has room for all of its records and the first is at or after ``start``, set\n"
"``offsets[key] = offset`` for every keyed record in order and return the record count, the\n"
"keys new to ``offsets`` in insertion order (their digests are the caller's to check) and\n"
"the last keyed record's offset (None if none). NotImplemented, with nothing changed, for\n"
"any other batch or case.";

static PyObject *
map_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || !PyDict_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError,
                        "map_batch(buf, position, offsets: dict, start, max_entries)");
        return NULL;
    }
    PyObject *offsets = args[2];
    int64_t position, start, max_entries;
    if (!kw_as_int64(args[1], &position) || !kw_as_int64(args[3], &start)
            || !kw_as_int64(args[4], &max_entries))
        return not_implemented();
    Py_buffer buf;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *result = NULL, *new_keys = NULL;
    rec_t *recs = NULL;
    batch_t b;
    int rc = HAND_OVER;
    if (batch_at(&buf, (Py_ssize_t)position, &b)
            || (recs = records_of(&b, 0, &rc)) == NULL) {
        if (recs == NULL && rc < 0)
            goto done;
        result = not_implemented();
        goto done;
    }
    if ((int64_t)PyDict_GET_SIZE(offsets) + b.count > max_entries
            || (b.count > 0 && recs[0].offset < start)) {
        result = not_implemented();  /* put one by one: the map may fill up in this batch */
        goto done;
    }
    new_keys = PyList_New(0);
    if (new_keys == NULL)
        goto done;
    int64_t last = 0;
    int keyed = 0;
    for (int32_t i = 0; i < b.count; i++) {
        rec_t *r = &recs[i];
        if (r->key_len < 0)
            continue;
        PyObject *key = PyBytes_FromStringAndSize((const char *)b.p + r->key, r->key_len);
        if (key == NULL)
            goto done;
        PyObject *offset = PyLong_FromLongLong(r->offset);
        if (offset == NULL) {
            Py_DECREF(key);
            goto done;
        }
        Py_ssize_t before = PyDict_GET_SIZE(offsets);  /* one probe: new if the dict grew */
        if (PyDict_SetItem(offsets, key, offset) < 0
                || (PyDict_GET_SIZE(offsets) > before && PyList_Append(new_keys, key) < 0)) {
            Py_DECREF(key);
            Py_DECREF(offset);
            goto done;
        }
        Py_DECREF(key);
        Py_DECREF(offset);
        last = r->offset;
        keyed = 1;
    }
    if (keyed)
        result = Py_BuildValue("(iOL)", (int)b.count, new_keys, (long long)last);
    else
        result = Py_BuildValue("(iOO)", (int)b.count, new_keys, Py_None);
done:
    Py_XDECREF(new_keys);
    PyMem_Free(recs);
    PyBuffer_Release(&buf);
    return result;
}

/* -- a frozen copy of the map for the copy pass ---------------------------------------------- */

/*
 * The copy pass looks up one key per record in the map, which does not change during the
 * pass. In the map's dict a look-up costs three dependent memory accesses (index, entry, key
 * object) plus a bytes object for the key; this table holds hash, offset and key position
 * in one 24-byte slot (open addressing, linear probing) and the keys in one block, so a
 * look-up is mostly one access, and no object is made. Same answers as the dict it copies:
 * a key is found with its offset, or is not in the map. The hash is Python's own for bytes
 * (SipHash with the process's random key), so hostile keys cannot pile up in one chain.
 */
typedef struct {
    Py_hash_t hash;
    int64_t offset;
    uint32_t key_at;
    int32_t key_len;  /* -1: empty slot */
} slot_t;

typedef struct {
    PyObject_HEAD
    slot_t *slots;
    size_t mask;
    unsigned char *keys;
    Py_ssize_t size;
} KeyTable;

static void
key_table_dealloc(KeyTable *self)
{
    PyMem_Free(self->slots);
    PyMem_Free(self->keys);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t
key_table_len(KeyTable *self)
{
    return self->size;
}

static PySequenceMethods key_table_as_sequence = {.sq_length = (lenfunc)key_table_len};

static PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pylogctl.storage.cleaner._cleaner_scan.KeyTable",
    .tp_basicsize = sizeof(KeyTable),
    .tp_dealloc = (destructor)key_table_dealloc,
    .tp_as_sequence = &key_table_as_sequence,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A read-only copy of an offset map's key -> offset dict (see key_table).",
};

static inline Py_hash_t
hash_span(const unsigned char *p, Py_ssize_t n)
{
#if PY_VERSION_HEX >= 0x030E0000
    return Py_HashBuffer(p, n);
#else
    return _Py_HashBytes(p, n);  /* what hash(bytes) computes */
#endif
}

/* 1 with *offset set when the key is in the table, else 0. */
static inline int
key_table_get(const KeyTable *t, const unsigned char *key, Py_ssize_t n, int64_t *offset)
{
    Py_hash_t h = hash_span(key, n);
    for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
        const slot_t *s = &t->slots[i];
        if (s->key_len < 0)
            return 0;
        if (s->hash == h && s->key_len == n && memcmp(t->keys + s->key_at, key, (size_t)n) == 0) {
            *offset = s->offset;
            return 1;
        }
    }
}

static const char key_table_doc[] =
"key_table(offsets: dict) -> KeyTable | NotImplemented\n\n"
"A read-only copy of ``offsets`` (bytes keys, int64 offsets) for filter_batch's look-ups;\n"
"NotImplemented when a key or value is of another kind (or the keys pass 4 GiB).";

static PyObject *
key_table(PyObject *self, PyObject *offsets)
{
    if (!PyDict_CheckExact(offsets)) {
        PyErr_SetString(PyExc_TypeError, "key_table(offsets: dict)");
        return NULL;
    }
    Py_ssize_t n = PyDict_GET_SIZE(offsets), pos = 0, total = 0;
    PyObject *key, *value;
    while (PyDict_Next(offsets, &pos, &key, &value)) {
        int64_t unused;
        if (!PyBytes_CheckExact(key) || !kw_as_int64(value, &unused))
            return not_implemented();
        total += PyBytes_GET_SIZE(key);
        if (total > (Py_ssize_t)UINT32_MAX)
            return not_implemented();
    }
    size_t slots = 8;  /* at most 3/4 full: a full default map (5 million keys) takes 200 MB */
    while (slots < (size_t)n + (size_t)n / 3 + 1)
        slots <<= 1;
    KeyTable *t = PyObject_New(KeyTable, &KeyTableType);
    if (t == NULL)
        return NULL;
    t->slots = PyMem_Malloc(slots * sizeof(slot_t));
    t->keys = PyMem_Malloc(total ? (size_t)total : 1);
    t->mask = slots - 1;
    t->size = n;
    if (t->slots == NULL || t->keys == NULL) {
        Py_DECREF(t);
        return PyErr_NoMemory();
    }
    memset(t->slots, 0xFF, slots * sizeof(slot_t));  /* key_len -1 everywhere */
    uint32_t at = 0;
    pos = 0;
    while (PyDict_Next(offsets, &pos, &key, &value)) {
        Py_hash_t h = PyObject_Hash(key);  /* cached in the key: the dict computed it */
        Py_ssize_t len = PyBytes_GET_SIZE(key);
        size_t i = (size_t)h & t->mask;
        while (t->slots[i].key_len >= 0)
            i = (i + 1) & t->mask;
        slot_t *s = &t->slots[i];
        s->hash = h;
        kw_as_int64(value, &s->offset);
        s->key_at = at;
        s->key_len = (int32_t)len;
        memcpy(t->keys + at, PyBytes_AS_STRING(key), (size_t)len);
        at += (uint32_t)len;
    }
    return (PyObject *)t;
}

/* -- the copy pass -------------------------------------------------------------------------- */

static const char filter_batch_doc[] =
"filter_batch(buf, position, out, latest, offsets, get, now_ms, new_horizon)\n"
"    -> (read, kept, invalid, written, max_timestamp, shallow_offset, max_offset)\n"
"       | NotImplemented\n\n"
"The CleanerFilter's record decisions for the plain v2 batch at ``position`` of ``buf`` (a\n"
"batch whose records are judged one by one), and filterTo's output for it appended to the\n"
"bytearray ``out``: the batch as it is when every record stays and it needs no delete\n"
"horizon, else the batch rebuilt around the kept records (``new_horizon`` stamped when a kept\n"
"record is a tombstone and the batch has no horizon yet). A record past ``latest`` stays; a\n"
"keyless one goes (counted invalid); another stays when its offset is at least its key's\n"
"(``offsets[key]``, else ``get(key)``; ``offsets`` the map's dict or a key_table() of it)\n"
"and it has a value or the batch's tombstones are\n"
"still retained. When no record stays nothing is written (the caller writes the empty\n"
"header a retained batch needs). NotImplemented, with nothing changed, for any batch the\n"
"Python path must take.";

typedef struct {
    PyObject *offsets, *get;  /* offsets: the map's dict, when there is no table */
    const KeyTable *table;
    int64_t latest, now_ms, new_horizon;
} judge_t;

/* The offset the map holds for the record's key (offsets[key], else get(key)): 0 with
 * *mapped set, -1 with an exception, -2 to hand over (an offset beyond int64). */
static int
mapped_offset(const judge_t *j, const batch_t *b, const rec_t *r, int64_t *mapped)
{
    if (j->table != NULL && key_table_get(j->table, b->p + r->key, r->key_len, mapped))
        return 0;
    PyObject *key = PyBytes_FromStringAndSize((const char *)b->p + r->key, r->key_len);
    if (key == NULL)
        return -1;
    int rc = 0;
    PyObject *found = j->table != NULL ? NULL : PyDict_GetItemWithError(j->offsets, key);
    if (found != NULL) {
        rc = kw_as_int64(found, mapped) ? 0 : -2;
    } else if (PyErr_Occurred()) {
        rc = -1;
    } else {  /* not in the map: another key may own its digest */
        PyObject *got = PyObject_CallOneArg(j->get, key);
        if (got == NULL)
            rc = -1;
        else {
            rc = kw_as_int64(got, mapped) ? 0 : -2;
            Py_DECREF(got);
        }
    }
    Py_DECREF(key);
    return rc;
}

/* Which records stay (kept[i]); the number kept, -1 with an exception, -2 to hand over. */
static Py_ssize_t
judge(const batch_t *b, const rec_t *recs, const judge_t *j, char *kept, int64_t *invalid)
{
    Py_ssize_t n = 0;
    *invalid = 0;
    if (b->base_offset > j->latest) {
        memset(kept, 1, (size_t)b->count);
        return b->count;
    }
    int retain_deletes = !(b->attributes & DELETE_HORIZON_FLAG) || j->now_ms < b->base_timestamp;
    for (int32_t i = 0; i < b->count; i++) {
        const rec_t *r = &recs[i];
        kept[i] = 0;
        if (r->offset > j->latest) {
            kept[i] = 1;
            n++;
            continue;
        }
        if (r->key_len < 0) {
            (*invalid)++;
            continue;
        }
        int64_t mapped;
        int rc = mapped_offset(j, b, r, &mapped);
        if (rc < 0)
            return rc;
        if (r->offset >= mapped && (retain_deletes || r->value_len >= 0)) {
            kept[i] = 1;
            n++;
        }
    }
    return n;
}

static inline unsigned char *
write_blob(unsigned char *p, const unsigned char *d, Py_ssize_t at, Py_ssize_t len)
{
    if (len < 0) {
        *p++ = 1;  /* zig-zag -1 */
        return p;
    }
    p = kw_write_varint(p, len);
    memcpy(p, d + at, (size_t)len);
    return p + len;
}

/* The record re-encoded (DefaultRecord.writeTo, attributes 0) at ``p``; returns the end. */
static unsigned char *
write_record(unsigned char *p, const batch_t *b, const rec_t *r, int64_t ts_delta,
             Py_ssize_t body)
{
    const unsigned char *d = b->p;
    p = kw_write_varint(p, body);
    *p++ = 0;
    p = kw_write_varint(p, ts_delta);
    p = kw_write_varint(p, r->off_delta);
    p = write_blob(p, d, r->key, r->key_len);
    p = write_blob(p, d, r->value, r->value_len);
    /* headers: validated by walk_records, re-read here */
    Py_ssize_t pos = r->headers;
    int64_t count = 0, klen = 0, vlen = 0;  /* set by read_varint: validated before */
    read_varint(d, b->size, &pos, 5, &count);
    p = kw_write_varint(p, count);
    for (int64_t h = 0; h < count; h++) {
        read_varint(d, b->size, &pos, 5, &klen);
        p = write_blob(p, d, pos, (Py_ssize_t)klen);
        pos += (Py_ssize_t)klen;
        read_varint(d, b->size, &pos, 5, &vlen);
        p = write_blob(p, d, pos, vlen < 0 ? -1 : (Py_ssize_t)vlen);
        if (vlen > 0)
            pos += (Py_ssize_t)vlen;
    }
    return p;
}

/* Body size of the re-encoded record (after its size varint). */
static inline Py_ssize_t
record_body_size(const rec_t *r, int64_t ts_delta)
{
    return 1 + kw_varint_size(ts_delta) + kw_varint_size(r->off_delta)
           + (r->key_len < 0 ? 1 : kw_varint_size(r->key_len) + r->key_len)
           + (r->value_len < 0 ? 1 : kw_varint_size(r->value_len) + r->value_len)
           + r->headers_size;
}

/* Append the rebuilt batch (record_filter.rebuild_batch) to ``out``: 0, -1 with an
 * exception, HAND_OVER on a timestamp delta leaving int64. */
static int
rebuild(PyObject *out, const batch_t *b, const rec_t *recs, const char *kept, Py_ssize_t n,
        int has_horizon, int64_t horizon, int64_t *max_ts, Py_ssize_t *written)
{
    int lat = b->attributes & TIMESTAMP_TYPE_FLAG;
    int64_t base_ts = 0;
    int first = 1;
    *max_ts = NO_TIMESTAMP;
    Py_ssize_t area = 0;
    for (int32_t i = 0; i < b->count; i++) {
        if (!kept[i])
            continue;
        const rec_t *r = &recs[i];
        if (first) {
            base_ts = has_horizon ? horizon : r->timestamp;
            first = 0;
        }
        int64_t ts_delta;
        if (kw_sub_overflows(r->timestamp, base_ts, &ts_delta))
            return HAND_OVER;
        Py_ssize_t body = record_body_size(r, ts_delta);
        area += kw_varint_size(body) + body;
        if (r->timestamp > *max_ts)
            *max_ts = r->timestamp;
    }
    if (lat)
        *max_ts = b->max_timestamp;
    if (area > INT32_MAX - BATCH_OVERHEAD)
        return HAND_OVER;
    Py_ssize_t size = BATCH_OVERHEAD + area, old = PyByteArray_GET_SIZE(out);
    if (PyByteArray_Resize(out, old + size) < 0)
        return -1;
    unsigned char *start = (unsigned char *)PyByteArray_AS_STRING(out) + old, *p = start;
    /* header: the original's fields but length, CRC, attributes, timestamps and count */
    memcpy(p, b->p, BATCH_OVERHEAD);
    kw_put32(p + 8, (uint32_t)(size - LOG_OVERHEAD));
    int attributes = (lat ? TIMESTAMP_TYPE_FLAG : 0)
                     | (b->attributes & TRANSACTIONAL_FLAG)
                     | (has_horizon ? DELETE_HORIZON_FLAG : 0);
    p[21] = (unsigned char)(attributes >> 8);
    p[22] = (unsigned char)attributes;
    kw_put64(p + 27, (uint64_t)base_ts);
    kw_put64(p + 35, (uint64_t)*max_ts);
    kw_put32(p + 57, (uint32_t)n);
    p += BATCH_OVERHEAD;
    for (int32_t i = 0; i < b->count; i++) {
        if (!kept[i])
            continue;
        int64_t ts_delta = recs[i].timestamp - base_ts;
        p = write_record(p, b, &recs[i], ts_delta, record_body_size(&recs[i], ts_delta));
    }
    kw_put32(start + CRC_OFFSET, pylogctl_crc32c(0, start + ATTRIBUTES_OFFSET,
                                                (size_t)(size - ATTRIBUTES_OFFSET)));
    *written = size;
    return 0;
}

static PyObject *
filter_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 8 || !PyByteArray_CheckExact(args[2])
            || !(PyDict_CheckExact(args[4]) || Py_IS_TYPE(args[4], &KeyTableType))) {
        PyErr_SetString(PyExc_TypeError, "filter_batch(buf, position, out: bytearray, latest, "
                                         "offsets: dict | KeyTable, get, now_ms, new_horizon)");
        return NULL;
    }
    PyObject *out = args[2];
    judge_t j = {.offsets = args[4], .get = args[5],
                 .table = Py_IS_TYPE(args[4], &KeyTableType) ? (KeyTable *)args[4] : NULL};
    int64_t position;
    if (!kw_as_int64(args[1], &position) || !kw_as_int64(args[3], &j.latest)
            || !kw_as_int64(args[6], &j.now_ms) || !kw_as_int64(args[7], &j.new_horizon))
        return not_implemented();
    Py_buffer buf;
    if (PyObject_GetBuffer(args[0], &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *result = NULL;
    rec_t *recs = NULL;
    char *kept = NULL;
    batch_t b;
    int rc = HAND_OVER;
    if (batch_at(&buf, (Py_ssize_t)position, &b)
            || (recs = records_of(&b, 1, &rc)) == NULL) {
        if (recs == NULL && rc < 0)
            goto done;
        result = not_implemented();
        goto done;
    }
    kept = PyMem_Malloc((size_t)(b.count ? b.count : 1));
    if (kept == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int64_t invalid;
    Py_ssize_t n = judge(&b, recs, &j, kept, &invalid);
    if (n == -1)
        goto done;
    if (n == -2) {
        result = not_implemented();
        goto done;
    }
    int64_t max_ts = NO_TIMESTAMP, shallow = -1, max_offset = -1;
    Py_ssize_t written = 0;
    if (n > 0) {
        int had_horizon = b.attributes & DELETE_HORIZON_FLAG, tombstone = 0;
        for (int32_t i = 0; i < b.count && !tombstone; i++)
            tombstone = kept[i] && recs[i].value_len < 0;
        int needs_horizon = !had_horizon && tombstone;
        for (int32_t i = b.count - 1; i >= 0; i--)
            if (kept[i]) {
                max_offset = recs[i].offset;
                break;
            }
        if (n == b.count && !needs_horizon) {  /* the batch as it is */
            Py_ssize_t old = PyByteArray_GET_SIZE(out);
            if (PyByteArray_Resize(out, old + b.size) < 0)
                goto done;
            memcpy(PyByteArray_AS_STRING(out) + old, b.p, (size_t)b.size);
            written = b.size;
            max_ts = b.max_timestamp;
            shallow = max_offset = b.last_offset;
        } else {
            rc = rebuild(out, &b, recs, kept, n, had_horizon || needs_horizon,
                         needs_horizon ? j.new_horizon : b.base_timestamp, &max_ts, &written);
            if (rc < 0)
                goto done;
            if (rc == HAND_OVER) {
                result = not_implemented();
                goto done;
            }
            shallow = ((b.attributes & TIMESTAMP_TYPE_FLAG) || max_ts != NO_TIMESTAMP)
                      ? b.last_offset : -1;
        }
    }
    result = Py_BuildValue("(inLnLLL)", (int)b.count, n, (long long)invalid, written,
                           (long long)max_ts, (long long)shallow, (long long)max_offset);
done:
    PyMem_Free(kept);
    PyMem_Free(recs);
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef cleaner_scan_methods[] = {
    {"map_batch", (PyCFunction)(void (*)(void))map_batch, METH_FASTCALL, map_batch_doc},
    {"filter_batch", (PyCFunction)(void (*)(void))filter_batch, METH_FASTCALL,
     filter_batch_doc},
    {"key_table", (PyCFunction)key_table, METH_O, key_table_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cleaner_scan_module = {
    PyModuleDef_HEAD_INIT,
    "pylogctl.storage.cleaner._cleaner_scan",
    "Optional C loops for the log cleaner's offset-map and copy passes over plain v2 batches.",
    -1,
    cleaner_scan_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__cleaner_scan(void)
{
    pylogctl_crc32c_init();
    if (PyType_Ready(&KeyTableType) < 0)
        return NULL;
    return PyModule_Create(&cleaner_scan_module);
}
