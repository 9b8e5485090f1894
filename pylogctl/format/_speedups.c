/*
 * pylogctl.format._speedups -- optional C version of record_batch.decode_records_py.
 *
 * Why: decoding v2 records is the hot loop of every deep read, and in pure Python it is
 * bounded by interpreter overhead (varint branches, slices, calls): about 1.8 us per
 * ~1 KiB record, under 2x kafka-python. This file does the same work in C and still
 * builds the very same objects (the Record and Header classes are passed in and called),
 * so callers cannot tell the two apart.
 *
 * Contract: for the same arguments, decode_records() returns records equal field by field
 * to decode_records_py(), or raises the same exception type (pylogctl.errors.
 * CorruptRecordError) with the same message and the same position, in the same order of
 * checks. The code below follows the Python function step by step; comments name the
 * Python line each step mirrors.
 *
 * Outside the fast path: the C code works on exact ``bytes`` and int64 values. When an
 * argument is anything else (a bytearray or memoryview, a bool or an int beyond int64), or
 * when a value would leave int64 (a 10-byte varlong whose raw value needs more than 64 bits,
 * an offset/timestamp/sequence sum that overflows), it returns ``NotImplemented`` before
 * raising or returning anything, and the Python wrapper decode_records() runs
 * decode_records_py() instead. Decoding has no side effects, so that rerun is exact; such
 * input only comes from corrupt or hand-made data, never from a readable segment.
 *
 * Built by setup.py as an optional extension: when no compiler is available the install
 * still succeeds and everything runs in Python. PYLOGCTL_NO_SPEEDUPS=1 turns it off.
 *
 * Maintenance: any change to decode_records_py or _read_headers (a check, a message, a
 * position) must be made here too. tests/format/test_fmt_speedups.py compares the two on the
 * corpus, on generated and mutated record areas and on every error path, and fails otherwise.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#include "_kafka_wire.h"

static PyObject *CorruptRecordError;  /* pylogctl.errors.CorruptRecordError */
static PyObject *java_utf8;           /* pylogctl.format.java_string.java_utf8 */
static PyObject *position_kwnames;    /* ("position",) for CorruptRecordError(msg, position=) */
static PyObject *str_position;        /* "position" */

/* A header key as Java decodes it (Utils.utf8): strict UTF-8, else Java's replacement
 * rules in pylogctl.format.java_string (rare: keys are nearly always valid text). */
static PyObject *
header_key(const char *s, Py_ssize_t n)
{
    PyObject *key = PyUnicode_DecodeUTF8(s, n, NULL);
    if (key != NULL || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return key;
    PyErr_Clear();
    PyObject *raw = PyBytes_FromStringAndSize(s, n);
    if (raw == NULL)
        return NULL;
    key = PyObject_CallOneArg(java_utf8, raw);
    Py_DECREF(raw);
    return key;
}

/* Raise CorruptRecordError(message, position=position); always returns -1. */
static int
raise_corrupt(Py_ssize_t position, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg == NULL)
        return -1;
    PyObject *pos = PyLong_FromSsize_t(position);
    if (pos == NULL) {
        Py_DECREF(msg);
        return -1;
    }
    PyObject *args[2] = {msg, pos};
    PyObject *exc = PyObject_Vectorcall(CorruptRecordError, args, 1, position_kwnames);
    Py_DECREF(msg);
    Py_DECREF(pos);
    if (exc == NULL)
        return -1;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

/* What the Python loop's "except IndexError" turns a read past the buffer into. */
static int
raise_structure(Py_ssize_t start)
{
    return raise_corrupt(start, "Found invalid record structure");
}

/* The pending exception as one (normalized) object, or NULL; and back. */
static PyObject *
take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL)
        return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) {
        PyException_SetTraceback(value, tb);
        Py_DECREF(tb);
    }
    Py_DECREF(type);
    return value;
#endif
}

static void
restore_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}

/*
 * Mirror of the loop's handler in decode_records_py:
 *
 *     except (IndexError, CorruptRecordError) as exc:
 *         if isinstance(exc, CorruptRecordError) and exc.position is not None and exc.position <= end:
 *             raise
 *         raise CorruptRecordError("Found invalid record structure", position=start) from None
 *
 * Every error raised inside the record loop goes through here, including errors from calling
 * the record or header class, so the rule applies exactly as in Python.
 */
static void
translate_loop_error(Py_ssize_t start, Py_ssize_t end)
{
    PyObject *exc = take_exception();
    if (exc == NULL)
        return;
    if (PyErr_GivenExceptionMatches(exc, CorruptRecordError)) {
        PyObject *pos = PyObject_GetAttr(exc, str_position);
        if (pos == NULL) {  /* exc.position raising: so it would in Python */
            Py_DECREF(exc);
            return;
        }
        int keep = 0;
        if (pos != Py_None) {
            PyObject *end_obj = PyLong_FromSsize_t(end);
            keep = end_obj == NULL ? -1 : PyObject_RichCompareBool(pos, end_obj, Py_LE);
            Py_XDECREF(end_obj);
        }
        Py_DECREF(pos);
        if (keep > 0) {
            restore_exception(exc);  /* raise */
            return;
        }
        if (keep < 0) {
            Py_DECREF(exc);
            return;
        }
    }
    else if (!PyErr_GivenExceptionMatches(exc, PyExc_IndexError)) {
        restore_exception(exc);  /* not caught by the handler */
        return;
    }
    Py_DECREF(exc);
    raise_structure(start);
}

/*
 * Mirror of varint.read_varint(buf, pos, max_bytes). Returns 0 with *out and *ppos set,
 * -1 with CorruptRecordError raised ("Truncated varint" / "Varint is too long", at the
 * varint's start), or 1 when the raw value needs more than 64 bits (only possible with
 * max_bytes == 10): the caller then hands the batch over to Python.
 */
static inline int
read_varint(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, int max_bytes,
            int64_t *out)
{
    Py_ssize_t pos = *ppos;
    int64_t v;
    switch (kw_read_varint(d, end, &pos, max_bytes, &v)) {
    case KW_VARINT_OK:
        *out = v;
        *ppos = pos;
        return 0;
    case KW_VARINT_TRUNCATED:
        return raise_corrupt(*ppos, "Truncated varint");
    case KW_VARINT_TOO_LONG:
        return raise_corrupt(*ppos, "Varint is too long, the most significant bit in "
                                    "the %dth byte is set", max_bytes);
    default:  /* KW_VARINT_WIDE: Python keeps going with a big int */
        return 1;
    }
}

/*
 * Mirror of _read_headers(data, pos). Returns 0 with *headers (a new tuple) and *ppos set,
 * -1 with an exception set, 1 for "hand over to Python" (never happens for 5-byte varints,
 * kept for symmetry with read_varint).
 */
static int
read_headers(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, Py_ssize_t start,
             PyObject *header_class, PyObject **headers)
{
    Py_ssize_t pos = *ppos;
    int64_t count = 0, klen = 0, vlen = 0;
    int rc = read_varint(d, end, &pos, 5, &count);
    if (rc)
        return rc;
    if (count < 0)
        return raise_corrupt(pos, "Found invalid number of record headers %lld", (long long)count);
    if (count > end - pos)
        return raise_corrupt(pos, "Found invalid number of record headers. %lld is larger than "
                                  "the remaining size of the buffer", (long long)count);
    PyObject *tuple = PyTuple_New((Py_ssize_t)count);
    if (tuple == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        if ((rc = read_varint(d, end, &pos, 5, &klen)) != 0)
            goto fail;
        if (klen < 0) {
            rc = raise_corrupt(pos, "Invalid negative header key size %lld", (long long)klen);
            goto fail;
        }
        if (pos + klen > end) {  /* Python: raise IndexError */
            rc = raise_structure(start);
            goto fail;
        }
        PyObject *key = header_key((const char *)d + pos, (Py_ssize_t)klen);
        if (key == NULL) {
            rc = -1;
            goto fail;
        }
        pos += (Py_ssize_t)klen;
        if ((rc = read_varint(d, end, &pos, 5, &vlen)) != 0) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *value;
        if (vlen >= 0) {
            if (pos + vlen > end) {  /* Python: raise IndexError */
                Py_DECREF(key);
                rc = raise_structure(start);
                goto fail;
            }
            value = PyBytes_FromStringAndSize((const char *)d + pos, (Py_ssize_t)vlen);
            if (value == NULL) {
                Py_DECREF(key);
                rc = -1;
                goto fail;
            }
            pos += (Py_ssize_t)vlen;
        }
        else if (vlen == -1) {
            value = Py_NewRef(Py_None);
        }
        else {
            Py_DECREF(key);
            rc = raise_corrupt(pos, "Found invalid record structure: header value size %lld",
                               (long long)vlen);
            goto fail;
        }
        PyObject *args[2] = {key, value};
        PyObject *header = PyObject_Vectorcall(header_class, args, 2, NULL);
        Py_DECREF(key);
        Py_DECREF(value);
        if (header == NULL) {
            rc = -1;
            goto fail;
        }
        PyTuple_SET_ITEM(tuple, i, header);
    }
    *headers = tuple;
    *ppos = pos;
    return 0;
fail:
    Py_DECREF(tuple);  /* unfilled slots are NULL, which tuple dealloc skips */
    return rc;
}

/* data[pos:pos + n] for bytes data, n >= 0 and pos <= end (Python clamps the slice). */
static inline PyObject *
slice(const unsigned char *d, Py_ssize_t end, Py_ssize_t pos, int64_t n)
{
    Py_ssize_t stop = (n > end - pos) ? end : pos + (Py_ssize_t)n;
    return PyBytes_FromStringAndSize((const char *)d + pos, stop - pos);
}

/*
 * pos += n after a key or value. Past the end of data, Python's pos only feeds the next
 * data[pos], which raises IndexError for any pos >= end; clamping to end + 1 keeps that
 * behaviour without overflowing a 32-bit Py_ssize_t.
 */
static inline Py_ssize_t
advance(Py_ssize_t end, Py_ssize_t pos, int64_t n)
{
    return (n > end - pos) ? end + 1 : pos + (Py_ssize_t)n;
}

/*
 * A record's key or value: data[pos] must exist (IndexError), then a varint size and that many
 * bytes, -1 giving None. Returns 0 with *out (a new reference) and *ppos set, -1 with an
 * exception set, 1 for "hand over to Python" (as read_varint).
 */
static int
read_nullable_bytes(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, Py_ssize_t start,
                    const char *what, PyObject **out)
{
    Py_ssize_t pos = *ppos;
    int64_t n = 0;
    int rc;
    if (pos >= end)
        return raise_structure(start);
    if ((rc = read_varint(d, end, &pos, 5, &n)) != 0)
        return rc;
    if (n >= 0) {
        if ((*out = slice(d, end, pos, n)) == NULL)
            return -1;
        pos = advance(end, pos, n);
    }
    else if (n == -1) {
        *out = Py_NewRef(Py_None);
    }
    else {
        return raise_corrupt(pos, "Found invalid record structure: %s size %lld", what,
                             (long long)n);
    }
    *ppos = pos;
    return 0;
}

PyDoc_STRVAR(decode_records_doc,
"decode_records(data, count, base_offset, base_timestamp, base_sequence, log_append_time,\n"
"               record_class, header_class)\n"
"--\n\n"
"C version of pylogctl.format.record_batch.decode_records_py: the same records (built by\n"
"calling record_class and header_class) or the same CorruptRecordError. Returns\n"
"NotImplemented for input outside bytes/int64, which the caller then decodes in Python.");

static PyObject *
decode_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "decode_records expected 8 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *data = args[0], *lat_obj = args[5];
    PyObject *record_class = args[6], *header_class = args[7];
    int64_t count, base_offset, base_timestamp, base_sequence, lat = 0;
    if (!PyBytes_CheckExact(data) || !kw_as_int64(args[1], &count)
            || !kw_as_int64(args[2], &base_offset) || !kw_as_int64(args[3], &base_timestamp)
            || !kw_as_int64(args[4], &base_sequence)
            || (lat_obj != Py_None && !kw_as_int64(lat_obj, &lat)))
        Py_RETURN_NOTIMPLEMENTED;
    (void)lat;  /* the timestamp *is* lat_obj, as in Python */

    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(data);
    const Py_ssize_t end = PyBytes_GET_SIZE(data);

    if (count < 0) {
        raise_corrupt(0, "Found invalid record count %lld in magic v2 batch", (long long)count);
        return NULL;
    }
    PyObject *out = PyList_New(0);
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0, start = 0;
    const int has_seq = base_sequence >= 0;
    int rc;
    PyObject *key = NULL, *value = NULL, *headers = NULL;
    for (int64_t i = 0; i < count; i++) {
        int64_t size = 0, ts_delta = 0, off_delta = 0;
        /* if pos >= end: raise ...premature EOF reached (at pos) */
        if (pos >= end) {
            raise_corrupt(pos, "Incorrect declared batch size, premature EOF reached");
            goto loop_error;
        }
        /* size = varint */
        if ((rc = read_varint(d, end, &pos, 5, &size)) != 0)
            goto loop_stop;
        start = pos;
        if (size > end - pos || size < 0) {
            raise_corrupt(start, "Invalid record size: expected %lld bytes in record payload, "
                                 "but instead the buffer has only %zd remaining bytes.",
                          (long long)size, end - pos);
            goto loop_error;
        }
        /* attributes = data[pos] (IndexError if past the end) */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        const unsigned char attributes = d[pos++];
        /* timestamp delta: data[pos] must exist (IndexError), then varlong */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        if ((rc = read_varint(d, end, &pos, 10, &ts_delta)) != 0)
            goto loop_stop;
        /* offset delta */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        if ((rc = read_varint(d, end, &pos, 5, &off_delta)) != 0)
            goto loop_stop;
        /* key, then value (pos may now be past the end: data[pos] raises IndexError) */
        if ((rc = read_nullable_bytes(d, end, &pos, start, "key", &key)) != 0)
            goto loop_stop;
        if ((rc = read_nullable_bytes(d, end, &pos, start, "value", &value)) != 0)
            goto loop_stop;
        /* headers: b = data[pos]; 0 -> (), else _read_headers(data, pos) */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        if (d[pos] == 0) {
            headers = PyTuple_New(0);  /* the empty-tuple singleton, as () in Python */
            if (headers == NULL)
                goto loop_error;
            pos += 1;
        }
        else if ((rc = read_headers(d, end, &pos, start, header_class, &headers)) != 0) {
            goto loop_stop;
        }
        if (pos - start != size) {
            raise_corrupt(start, "Invalid record size: expected to read %lld bytes in record "
                                 "payload, but instead read %zd", (long long)size, pos - start);
            goto loop_error;
        }
        /* seq = base_sequence + off_delta, wrapped once past int32 max; offset; timestamp */
        int64_t seq = -1, offset, timestamp = 0;
        if (has_seq) {
            if (kw_add_overflows(base_sequence, off_delta, &seq)) {
                rc = 1;
                goto loop_stop;
            }
            if (seq > KW_INT32_MAX)
                seq -= 0x80000000LL;
        }
        if (kw_add_overflows(base_offset, off_delta, &offset)) {
            rc = 1;
            goto loop_stop;
        }
        if (lat_obj == Py_None && kw_add_overflows(base_timestamp, ts_delta, &timestamp)) {
            rc = 1;
            goto loop_stop;
        }
        PyObject *rargs[7];
        rargs[0] = PyLong_FromLongLong(offset);
        rargs[1] = lat_obj == Py_None ? PyLong_FromLongLong(timestamp) : Py_NewRef(lat_obj);
        rargs[2] = key;
        rargs[3] = value;
        rargs[4] = headers;
        rargs[5] = PyLong_FromLongLong(seq);
        rargs[6] = PyLong_FromLong(attributes);
        PyObject *record = NULL;
        if (rargs[0] && rargs[1] && rargs[5] && rargs[6])
            record = PyObject_Vectorcall(record_class, rargs, 7, NULL);
        Py_XDECREF(rargs[0]);
        Py_XDECREF(rargs[1]);
        Py_XDECREF(rargs[5]);
        Py_XDECREF(rargs[6]);
        Py_CLEAR(key);
        Py_CLEAR(value);
        Py_CLEAR(headers);
        if (record == NULL)
            goto loop_error;
        int err = PyList_Append(out, record);
        Py_DECREF(record);
        if (err < 0)
            goto loop_error;
    }
    if (pos != end) {
        raise_corrupt(pos, "Incorrect declared batch size, records still remaining in file");
        Py_DECREF(out);
        return NULL;
    }
    return out;

loop_stop:  /* rc < 0: an error is set; rc > 0: outside int64, let Python decode it */
    if (rc > 0) {
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(headers);
        Py_DECREF(out);
        Py_RETURN_NOTIMPLEMENTED;
    }
loop_error:
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(headers);
    Py_DECREF(out);
    translate_loop_error(start, end);
    return NULL;
}

/* _crc32c.c */
void pylogctl_crc32c_init(void);
PyObject *pylogctl_crc32c_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *pylogctl_crc32c_portable_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
extern const char pylogctl_crc32c_doc[];

/* _batch_lines.c */
PyObject *format_v2_batch_lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
extern const char format_v2_batch_lines_doc[];

/* scan_recovery: included, not a source of its own (setup.py lists the translation units) */
#include "_recover_scan.c"
/* summarize_records: likewise */
#include "_record_summary.c"

static PyMethodDef speedups_methods[] = {
    {"decode_records", (PyCFunction)(void (*)(void))decode_records, METH_FASTCALL,
     decode_records_doc},
    {"crc32c", (PyCFunction)(void (*)(void))pylogctl_crc32c_py, METH_FASTCALL,
     pylogctl_crc32c_doc},
    {"_crc32c_portable", (PyCFunction)(void (*)(void))pylogctl_crc32c_portable_py, METH_FASTCALL,
     "crc32c() forced onto the table-driven path (for tests)."},
    {"format_v2_batch_lines", (PyCFunction)(void (*)(void))format_v2_batch_lines, METH_FASTCALL,
     format_v2_batch_lines_doc},
    {"scan_recovery", (PyCFunction)(void (*)(void))scan_recovery, METH_FASTCALL,
     scan_recovery_doc},
    {"summarize_records", (PyCFunction)(void (*)(void))summarize_records, METH_FASTCALL,
     summarize_records_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    "pylogctl.format._speedups",
    "Optional C accelerators: record decoding, CRC-32C, the shallow dump's batch lines and "
    "segment recovery's batch loop.",
    -1,
    speedups_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *errors = PyImport_ImportModule("pylogctl.errors");
    if (errors == NULL)
        return NULL;
    CorruptRecordError = PyObject_GetAttrString(errors, "CorruptRecordError");
    Py_DECREF(errors);
    if (CorruptRecordError == NULL)
        return NULL;
    str_position = PyUnicode_InternFromString("position");
    if (str_position == NULL)
        return NULL;
    position_kwnames = PyTuple_Pack(1, str_position);
    if (position_kwnames == NULL)
        return NULL;
    PyObject *java_string = PyImport_ImportModule("pylogctl.format.java_string");
    if (java_string == NULL)
        return NULL;
    java_utf8 = PyObject_GetAttrString(java_string, "java_utf8");
    Py_DECREF(java_string);
    if (java_utf8 == NULL)
        return NULL;
    pylogctl_crc32c_init();
    return PyModule_Create(&speedups_module);
}
