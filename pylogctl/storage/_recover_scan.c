/*
 * pylogctl.storage._recover_scan -- scan_recovery, the batch loop of LogSegment.recover
 * (segment.py) for magic-2 batches: an optional extension built by setup.py;
 * PYLOGCTL_NO_SPEEDUPS=1 turns it off (pylogctl/speedups.py).
 *
 * Why: recovery validates and indexes every batch of every segment it rebuilds. In Python a
 * batch costs ~3-5 us besides its CRC (the batch object, the CRC call, two index appends),
 * which put an index rebuild at 2.3x a bare CRC loop over the same bytes. Here the
 * same checks and the same index arithmetic run over the mmap in C, and Python only sees the
 * batches that need it.
 *
 * Contract (pylogctl/storage/segment.py, LogSegment.recover, is the reference): from
 * `position`, for each batch starting before `limit`, do what recover() does for it --
 * iter_batches' framing checks, ensure_valid (v2 header size, CRC-32C over attributes..end),
 * the offset range check, the max timestamp so far, an offset-index entry and a time-index
 * entry whenever more than `interval` bytes were scanned since the last entry -- and return
 * the new state with the entries packed in the index files' layouts. It never raises for bad
 * data and never decides an error: it returns *before* any batch it cannot finish the way
 * recover() would without raising (fewer than 18 bytes left, a size below 14, a batch past
 * `end`, a magic other than 2, a size below the v2 header, a CRC mismatch, a last offset
 * outside base + [0, 2^31-1], an entry the index would refuse: full, offset not increasing,
 * position past int32, time going backwards), and recover()'s Python loop takes that batch,
 * so every error, message and truncation still comes from one place. It returns *after* a
 * valid batch that must be replayed (a new leader epoch for the epoch cache, a producer
 * batch for producer state), with its position, so the caller replays it in Python before
 * scanning on; replay never changes the offset and time indexes, so the order of the work is
 * recover()'s.
 *
 * Maintenance: a change to recover()'s loop or to the index append rules must be made here too.
 * tests/storage/test_recover_speedups.py recovers with and without this function (corpus,
 * damaged copies, generated batch sequences) and compares every byte and outcome;
 * tests/fuzz/fuzz_recover.py does the same on mutated segments.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../format/_kafka_wire.h"

uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n);  /* _crc32c.c */
void pylogctl_crc32c_init(void);

#define RS_HEADER_UP_TO_MAGIC 17
#define RS_MIN_RECORD_OVERHEAD 14
#define RS_LOG_OVERHEAD 12
#define RS_V2_OVERHEAD 61

/* producer_mode: which batches with a producer id need a replay in Python */
#define RS_PRODUCERS_NONE 0      /* no producer state */
#define RS_PRODUCERS_ALL 1       /* every batch with producer id >= 0 */
#define RS_PRODUCERS_FILTERED 2  /* transactional ones, and those of the ids in a set */

/* Whether `offset` is base + [0, Int.MaxValue] (AbstractIndex.can_append_offset), in int64. */
static inline int
rs_fits(int64_t offset, int64_t base)
{
    return offset >= base && (uint64_t)offset - (uint64_t)base <= (uint64_t)KW_INT32_MAX;
}

typedef struct {
    unsigned char *data;
    Py_ssize_t len, cap;
} RsPacked;

/* Room for one more entry of `size` bytes; -1 when out of memory (no exception set: the
   loop runs without the GIL, and the caller raises MemoryError once it has it back). */
static int
rs_reserve(RsPacked *b, Py_ssize_t size)
{
    if (b->len + size <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap * 2 : 4096;
    unsigned char *d = PyMem_RawRealloc(b->data, (size_t)cap);
    if (d == NULL)
        return -1;
    b->data = d;
    b->cap = cap;
    return 0;
}

/* Like kw_as_int64 (_kafka_wire.h), None giving *present = 0. */
static int
rs_opt_int64(PyObject *obj, int64_t *out, int *present)
{
    *present = obj != Py_None;
    return obj == Py_None || kw_as_int64(obj, out);
}

PyDoc_STRVAR(scan_recovery_doc,
"scan_recovery(buf, position, limit, end, base_offset, interval, last_index_entry,\n"
"              max_timestamp, offset_of_max_timestamp, offset_index_last, offset_index_room,\n"
"              time_index_last_timestamp, time_index_last_offset, time_index_room,\n"
"              epoch_above, producer_mode, producer_ids)\n"
"--\n\n"
"LogSegment.recover's loop over the magic-2 batches of buf[position:end] that start before\n"
"limit. Returns (position, last_index_entry, max_timestamp, offset_of_max_timestamp,\n"
"last_plain_offset, replay_position, offset_index_entries, time_index_entries): the state\n"
"after the batches done, the last offset of the last one not to replay (None if none), the\n"
"position of the batch to replay now (None if none; it is the last one done) and the new\n"
"index entries, packed as in the files. Stops before any batch that recover() must handle in\n"
"Python. offset_index_last is None for an empty index, time_index_last_offset None for an\n"
"empty time index (its last timestamp is then -1); the rooms are how many entries each index\n"
"still takes. A batch is replayed for its leader epoch when that is >= 0 and > epoch_above,\n"
"and for its producer id >= 0 by producer_mode: 0 never, 1 always, 2 when transactional or\n"
"in the set producer_ids. Returns NotImplemented when an argument is outside int64.");

static PyObject *
scan_recovery(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 17) {
        PyErr_Format(PyExc_TypeError, "scan_recovery expected 17 arguments, got %zd", nargs);
        return NULL;
    }
    int64_t position, limit, end, base, interval, last_index_entry, max_ts, max_ts_offset;
    int64_t oi_last = 0, oi_room, ti_last_ts, ti_last_offset = 0, ti_room, epoch_above;
    int64_t producer_mode;
    int oi_has_last, ti_has_last;
    PyObject *producer_ids = args[16];
    if (!kw_as_int64(args[1], &position) || !kw_as_int64(args[2], &limit)
            || !kw_as_int64(args[3], &end) || !kw_as_int64(args[4], &base)
            || !kw_as_int64(args[5], &interval) || !kw_as_int64(args[6], &last_index_entry)
            || !kw_as_int64(args[7], &max_ts) || !kw_as_int64(args[8], &max_ts_offset)
            || !rs_opt_int64(args[9], &oi_last, &oi_has_last) || !kw_as_int64(args[10], &oi_room)
            || !kw_as_int64(args[11], &ti_last_ts)
            || !rs_opt_int64(args[12], &ti_last_offset, &ti_has_last)
            || !kw_as_int64(args[13], &ti_room) || !kw_as_int64(args[14], &epoch_above)
            || !kw_as_int64(args[15], &producer_mode))
        Py_RETURN_NOTIMPLEMENTED;
    if (producer_mode < RS_PRODUCERS_NONE || producer_mode > RS_PRODUCERS_FILTERED) {
        PyErr_SetString(PyExc_ValueError, "producer_mode must be 0, 1 or 2");
        return NULL;
    }
    if (producer_mode == RS_PRODUCERS_FILTERED && !PyAnySet_Check(producer_ids)) {
        PyErr_SetString(PyExc_TypeError, "producer_ids must be a set when producer_mode is 2");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (position < 0 || end < position || end > view.len || interval < 0
            || last_index_entry < 0 || last_index_entry > position) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "scan_recovery: position, end or index state out of "
                                          "range of the buffer");
        return NULL;
    }
    if (limit > end)
        limit = end;

    const unsigned char *d = (const unsigned char *)view.buf;
    RsPacked oi = {NULL, 0, 0}, ti = {NULL, 0, 0};
    int64_t last_plain = 0, replay_at = -1;
    int has_plain = 0;
    PyObject *result = NULL;
    int out_of_memory = 0;

    /* The loop reads only the buffer (exported, so an mmap cannot close under it) and C
       locals: other threads run meanwhile (recover --threads); the GIL is taken back only to
       look a producer id up in the set. */
    PyThreadState *unlocked = PyEval_SaveThread();
    while (position < limit) {
        const int64_t pos = position;
        /* iter_batches: fewer than 18 bytes left ends the scan (end - pos > 17 below) */
        if (end - pos <= RS_HEADER_UP_TO_MAGIC)
            break;
        const unsigned char *p = d + pos;
        const int64_t size = (int32_t)kw_be32(p + 8);
        /* a size below 14 raises; a batch running past the end stops the scan */
        if (size < RS_MIN_RECORD_OVERHEAD || size > end - pos - RS_LOG_OVERHEAD)
            break;
        /* magic 0/1 and unknown magics: Python's path */
        if (p[16] != 2)
            break;
        const int64_t batch_size = size + RS_LOG_OVERHEAD;  /* <= end - pos: all of p[] below */
        /* ensure_valid: the v2 header fits, and the CRC-32C of attributes..end matches */
        if (batch_size < RS_V2_OVERHEAD)
            break;
        if (pylogctl_crc32c(0, p + 21, (size_t)(batch_size - 21)) != kw_be32(p + 17))
            break;
        /* last offset as a Java long (wrapping) must fit the segment's indexes */
        const int64_t base_offset = (int64_t)kw_be64(p);
        const int64_t last_offset = (int64_t)((uint64_t)base_offset
                                              + (uint64_t)(int64_t)(int32_t)kw_be32(p + 23));
        if (!rs_fits(last_offset, base))
            break;
        const int64_t batch_max_ts = (int64_t)kw_be64(p + 35);
        int64_t new_max_ts = max_ts, new_max_ts_offset = max_ts_offset;
        if (batch_max_ts > max_ts) {
            new_max_ts = batch_max_ts;
            new_max_ts_offset = last_offset;
        }
        int index_now = pos - last_index_entry > interval, time_entry = 0;
        if (index_now) {
            /* OffsetIndex.append: room, an increasing offset, a position in int32 */
            if (oi_room <= 0 || (oi_has_last && last_offset <= oi_last)
                    || pos > KW_INT32_MAX)
                break;
            /* TimeIndex.maybe_append: room, offset and timestamp not going back */
            if (ti_room <= 0)
                break;
            if (ti_has_last && (new_max_ts_offset < ti_last_offset || new_max_ts < ti_last_ts))
                break;
            time_entry = new_max_ts > ti_last_ts;
            if (time_entry && !rs_fits(new_max_ts_offset, base))
                break;
        }
        /* does Python have to replay the batch? */
        int replay = 0;
        const int64_t epoch = (int32_t)kw_be32(p + 12);
        if (epoch >= 0 && epoch > epoch_above)
            replay = 1;
        const int64_t producer_id = (int64_t)kw_be64(p + 43);
        if (!replay && producer_id >= 0 && producer_mode != RS_PRODUCERS_NONE) {
            const int transactional = (p[22] & 0x10) != 0;  /* attributes' low byte */
            if (producer_mode == RS_PRODUCERS_ALL || transactional) {
                replay = 1;
            }
            else {
                PyEval_RestoreThread(unlocked);
                int found = 0;
                if (PySet_GET_SIZE(producer_ids) > 0) {
                    PyObject *pid = PyLong_FromLongLong(producer_id);
                    found = pid == NULL ? -1 : PySet_Contains(producer_ids, pid);
                    Py_XDECREF(pid);
                }
                if (found < 0)
                    goto done;  /* with the GIL, and the exception set */
                unlocked = PyEval_SaveThread();
                replay = found;
            }
        }
        /* the batch is done: commit it */
        if (index_now) {
            if (rs_reserve(&oi, 8) < 0 || (time_entry && rs_reserve(&ti, 12) < 0)) {
                out_of_memory = 1;
                break;
            }
            kw_put32(oi.data + oi.len, (uint32_t)(last_offset - base));
            kw_put32(oi.data + oi.len + 4, (uint32_t)pos);
            oi.len += 8;
            oi_last = last_offset;
            oi_has_last = 1;
            oi_room--;
            if (time_entry) {
                kw_put64(ti.data + ti.len, (uint64_t)new_max_ts);
                kw_put32(ti.data + ti.len + 8, (uint32_t)(new_max_ts_offset - base));
                ti.len += 12;
                ti_last_ts = new_max_ts;
                ti_last_offset = new_max_ts_offset;
                ti_has_last = 1;
            }
            ti_room -= time_entry;  /* a skipped time entry takes no room */
            last_index_entry = pos;
        }
        max_ts = new_max_ts;
        max_ts_offset = new_max_ts_offset;
        position = pos + batch_size;
        if (replay) {
            replay_at = pos;
            break;
        }
        last_plain = last_offset;
        has_plain = 1;
    }
    PyEval_RestoreThread(unlocked);
    if (out_of_memory) {
        PyErr_NoMemory();
        goto done;
    }

    {
        PyObject *oi_bytes = PyBytes_FromStringAndSize((const char *)oi.data, oi.len);
        PyObject *ti_bytes = PyBytes_FromStringAndSize((const char *)ti.data, ti.len);
        if (oi_bytes != NULL && ti_bytes != NULL) {
            PyObject *plain = has_plain ? PyLong_FromLongLong(last_plain) : Py_NewRef(Py_None);
            PyObject *replay_obj = replay_at >= 0 ? PyLong_FromLongLong(replay_at)
                                                  : Py_NewRef(Py_None);
            if (plain != NULL && replay_obj != NULL)
                result = Py_BuildValue("(LLLLOOOO)", (long long)position,
                                       (long long)last_index_entry, (long long)max_ts,
                                       (long long)max_ts_offset, plain, replay_obj, oi_bytes,
                                       ti_bytes);
            Py_XDECREF(plain);
            Py_XDECREF(replay_obj);
        }
        Py_XDECREF(oi_bytes);
        Py_XDECREF(ti_bytes);
    }
done:
    PyMem_RawFree(oi.data);
    PyMem_RawFree(ti.data);
    PyBuffer_Release(&view);
    return result;
}

static PyMethodDef recover_scan_methods[] = {
    {"scan_recovery", (PyCFunction)(void (*)(void))scan_recovery, METH_FASTCALL,
     scan_recovery_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef recover_scan_module = {
    PyModuleDef_HEAD_INIT,
    "pylogctl.storage._recover_scan",
    "Optional C loop of segment recovery over runs of valid magic-2 batches.",
    -1,
    recover_scan_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__recover_scan(void)
{
    pylogctl_crc32c_init();
    return PyModule_Create(&recover_scan_module);
}
