/* Per-op loops of the Ascend IR, in C (optional: fxlab/ir/speedups.py).
 *
 * Every dump writer renders each op *shape* once in Python (fxlab/ir/op_shapes.py) and
 * then, per op, only puts the op's name, inputs and provenance between its shape's
 * pieces. Those per-op loops run over thousands of ops; here they read the ops' slots
 * directly and write each result into one buffer sized in advance. The conversion's
 * template replay (fxlab/passes/conversion_replay.py) copies its ops here too.
 *
 * Each function returns None when its input is not what the fast path handles (an op
 * that is not an IrOp, a field of another type, a string that is not ASCII where the
 * output must be); the caller then takes the Python path, which gives the same output.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

/* IrOp (a slotted dataclass): its type and the offsets of the slots read here. */
static PyTypeObject *op_type = NULL;
static Py_ssize_t off_name, off_type, off_inputs, off_attrs, off_input_desc, off_output_desc, off_fx_node, off_source;

#define SLOT(op, off) (*(PyObject **)((char *)(op) + (off)))

static int slot_offset(PyObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL)
        return -1;
    if (Py_TYPE(descr) != &PyMemberDescr_Type || ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX) {
        Py_DECREF(descr);
        PyErr_Format(PyExc_TypeError, "%s is not an object slot", name);
        return -1;
    }
    *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    Py_DECREF(descr);
    return 0;
}

static PyObject *bind(PyObject *self, PyObject *type) {
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "bind() takes the IrOp class");
        return NULL;
    }
    if (slot_offset(type, "name", &off_name) || slot_offset(type, "type", &off_type) ||
        slot_offset(type, "inputs", &off_inputs) || slot_offset(type, "attrs", &off_attrs) ||
        slot_offset(type, "input_desc", &off_input_desc) || slot_offset(type, "output_desc", &off_output_desc) ||
        slot_offset(type, "fx_node", &off_fx_node) || slot_offset(type, "source", &off_source))
        return NULL;
    Py_XSETREF(op_type, (PyTypeObject *)Py_NewRef(type));
    Py_RETURN_NONE;
}

/* Whether every slot the loops read holds what they expect: an exact IrOp whose
 * name is a str, inputs a list of str, fx_node and source a str or None. */
static int op_is_usable(PyObject *op) {
    if (op_type == NULL || Py_TYPE(op) != op_type)
        return 0;
    PyObject *inputs = SLOT(op, off_inputs), *fx = SLOT(op, off_fx_node), *source = SLOT(op, off_source);
    if (SLOT(op, off_name) == NULL || !PyUnicode_CheckExact(SLOT(op, off_name)) || inputs == NULL || !PyList_CheckExact(inputs))
        return 0;
    if (fx == NULL || (fx != Py_None && !PyUnicode_CheckExact(fx)) || source == NULL || (source != Py_None && !PyUnicode_CheckExact(source)))
        return 0;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(inputs); j++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(inputs, j)))
            return 0;
    return 1;
}

/* Printable ASCII without quotes or backslashes (op_shapes.is_plain). */
static int is_plain(PyObject *text) {
    if (!PyUnicode_IS_ASCII(text))
        return 0;
    const unsigned char *c = PyUnicode_1BYTE_DATA(text);
    for (Py_ssize_t i = 0, n = PyUnicode_GET_LENGTH(text); i < n; i++)
        if (c[i] < 0x20 || c[i] > 0x7e || c[i] == '"' || c[i] == '\'' || c[i] == '\\')
            return 0;
    return 1;
}

/* scan_ops(ops, end_mark) -> (inputs, plain, fx_nodes, sources) | None
 * inputs: every op's inputs in op order, each op's followed by end_mark; plain: whether
 * every name, input, FX node and source is plain; fx_nodes, sources: each value once. */
static PyObject *scan_ops(PyObject *self, PyObject *args) {
    PyObject *ops, *end_mark;
    if (!PyArg_ParseTuple(args, "O!U", &PyList_Type, &ops, &end_mark))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ops), count = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i);
        if (!op_is_usable(op))
            Py_RETURN_NONE;
        count += PyList_GET_SIZE(SLOT(op, off_inputs));
    }
    PyObject *inputs = PyList_New(count), *fx_nodes = PySet_New(NULL), *sources = PySet_New(NULL);
    if (inputs == NULL || fx_nodes == NULL || sources == NULL)
        goto error;
    int plain = 1;
    Py_ssize_t k = 0;
    PyObject *last_fx = Py_None, *last_source = Py_None; /* checked already: ops repeat them */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i), *op_inputs = SLOT(op, off_inputs);
        PyObject *fx = SLOT(op, off_fx_node), *source = SLOT(op, off_source);
        plain = plain && is_plain(SLOT(op, off_name));
        if (plain && fx != last_fx)
            plain = fx == Py_None || is_plain(fx);
        if (plain && source != last_source)
            plain = source == Py_None || is_plain(source);
        last_fx = fx;
        last_source = source;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(op_inputs); j++) {
            PyObject *text = PyList_GET_ITEM(op_inputs, j);
            plain = plain && is_plain(text);
            PyList_SET_ITEM(inputs, k++, Py_NewRef(text));
        }
        PyList_SET_ITEM(inputs, k++, Py_NewRef(end_mark));
        if (PySet_Add(fx_nodes, fx) < 0 || PySet_Add(sources, source) < 0)
            goto error;
    }
    PyObject *frozen_fx = PyFrozenSet_New(fx_nodes), *frozen_sources = PyFrozenSet_New(sources);
    Py_DECREF(fx_nodes);
    Py_DECREF(sources);
    if (frozen_fx == NULL || frozen_sources == NULL) {
        Py_XDECREF(frozen_fx);
        Py_XDECREF(frozen_sources);
        Py_DECREF(inputs);
        return NULL;
    }
    return Py_BuildValue("(NONN)", inputs, plain ? Py_True : Py_False, frozen_fx, frozen_sources);
error:
    Py_XDECREF(inputs);
    Py_XDECREF(fx_nodes);
    Py_XDECREF(sources);
    return NULL;
}

/* identity_groups(ops) -> (index, firsts) | None
 * Per op a group number: ops with the same type (by value), presence of a name, input
 * count, presence of an FX node and of a source, and the same attrs and desc objects
 * (by identity) share one (op_shapes._identity_groups); and the position of each
 * group's first op. Groups are numbered in order of first appearance. */
typedef struct {
    PyObject *type;
    Py_hash_t type_hash;
    Py_ssize_t inputs;
    int flags;
    PyObject *attrs, *input_desc, *output_desc;
    Py_ssize_t group; /* -1: empty */
} GroupKey;

static Py_hash_t key_hash(const GroupKey *key) {
    Py_uhash_t h = (Py_uhash_t)key->type_hash;
    h = h * 1000003u ^ (Py_uhash_t)key->inputs;
    h = h * 1000003u ^ (Py_uhash_t)key->flags;
    h = h * 1000003u ^ ((Py_uhash_t)key->attrs >> 4);
    h = h * 1000003u ^ ((Py_uhash_t)key->input_desc >> 4);
    h = h * 1000003u ^ ((Py_uhash_t)key->output_desc >> 4);
    return (Py_hash_t)h;
}

static int same_key(const GroupKey *a, const GroupKey *b) {
    if (a->inputs != b->inputs || a->flags != b->flags || a->attrs != b->attrs || a->input_desc != b->input_desc ||
        a->output_desc != b->output_desc || a->type_hash != b->type_hash)
        return 0;
    return a->type == b->type || PyUnicode_Compare(a->type, b->type) == 0;
}

static PyObject *identity_groups(PyObject *self, PyObject *ops) {
    if (!PyList_CheckExact(ops)) {
        PyErr_SetString(PyExc_TypeError, "identity_groups() takes a list of ops");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(ops);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i);
        if (!op_is_usable(op) || SLOT(op, off_type) == NULL || !PyUnicode_CheckExact(SLOT(op, off_type)) ||
            SLOT(op, off_attrs) == NULL || SLOT(op, off_input_desc) == NULL || SLOT(op, off_output_desc) == NULL)
            Py_RETURN_NONE;
    }
    Py_ssize_t capacity = 8;
    while (capacity < 2 * n)
        capacity <<= 1;
    GroupKey *table = PyMem_Calloc(capacity, sizeof(GroupKey));
    PyObject *index = PyList_New(n), *firsts = PyList_New(0);
    if (table == NULL || index == NULL || firsts == NULL)
        goto error;
    for (Py_ssize_t i = 0; i < capacity; i++)
        table[i].group = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i);
        GroupKey key;
        key.type = SLOT(op, off_type);
        key.type_hash = PyObject_Hash(key.type); /* a str: cached after the first time */
        if (key.type_hash == -1)
            goto error;
        key.inputs = PyList_GET_SIZE(SLOT(op, off_inputs));
        key.flags = (PyUnicode_GET_LENGTH(SLOT(op, off_name)) == 0) | (SLOT(op, off_fx_node) == Py_None) << 1 |
                    (SLOT(op, off_source) == Py_None) << 2;
        key.attrs = SLOT(op, off_attrs);
        key.input_desc = SLOT(op, off_input_desc);
        key.output_desc = SLOT(op, off_output_desc);
        Py_ssize_t slot = (Py_ssize_t)((Py_uhash_t)key_hash(&key) & (Py_uhash_t)(capacity - 1));
        while (table[slot].group != -1 && !same_key(&table[slot], &key))
            slot = (slot + 1) & (capacity - 1);
        if (table[slot].group == -1) {
            key.group = PyList_GET_SIZE(firsts);
            table[slot] = key;
            PyObject *first = PyLong_FromSsize_t(i);
            if (first == NULL || PyList_Append(firsts, first) < 0) {
                Py_XDECREF(first);
                goto error;
            }
            Py_DECREF(first);
        }
        PyObject *group = PyLong_FromSsize_t(table[slot].group);
        if (group == NULL)
            goto error;
        PyList_SET_ITEM(index, i, group);
    }
    PyMem_Free(table);
    return Py_BuildValue("(NN)", index, firsts);
error:
    PyMem_Free(table);
    Py_XDECREF(index);
    Py_XDECREF(firsts);
    return NULL;
}

/* Whether every piece is a tuple of four str of one byte per character (ASCII when
 * `ascii`). */
static int pieces_usable(PyObject *pieces, Py_ssize_t n, int ascii) {
    if (!PyList_CheckExact(pieces) || PyList_GET_SIZE(pieces) != n)
        return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PyList_GET_ITEM(pieces, i);
        if (!PyTuple_CheckExact(p) || PyTuple_GET_SIZE(p) != 4)
            return 0;
        for (int j = 0; j < 4; j++) {
            PyObject *s = PyTuple_GET_ITEM(p, j);
            if (!PyUnicode_CheckExact(s) || (ascii ? !PyUnicode_IS_ASCII(s) : PyUnicode_KIND(s) != PyUnicode_1BYTE_KIND))
                return 0;
        }
    }
    return 1;
}

#define LENGTH(s) PyUnicode_GET_LENGTH(s)
#define PUT(s)                                                     \
    do {                                                           \
        PyObject *put_ = (s);                                      \
        memcpy(w, PyUnicode_1BYTE_DATA(put_), LENGTH(put_));       \
        w += LENGTH(put_);                                         \
    } while (0)

/* text_ops(ops, pieces, head, sep, trim=0) -> str | None
 * Per op: head, name, pieces[0], its inputs joined by sep, pieces[1], FX node,
 * pieces[2], source, pieces[3] (an absent FX node or source adds nothing); all ASCII.
 * The last `trim` characters of the whole text are left out. */
static PyObject *text_ops(PyObject *self, PyObject *args) {
    PyObject *ops, *pieces, *head, *sep;
    Py_ssize_t trim = 0;
    if (!PyArg_ParseTuple(args, "O!OUU|n", &PyList_Type, &ops, &pieces, &head, &sep, &trim))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ops);
    if (!PyUnicode_IS_ASCII(head) || !PyUnicode_IS_ASCII(sep) || !pieces_usable(pieces, n, 1))
        Py_RETURN_NONE;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i), *p = PyList_GET_ITEM(pieces, i);
        if (!op_is_usable(op) || !PyUnicode_IS_ASCII(SLOT(op, off_name)))
            Py_RETURN_NONE;
        PyObject *inputs = SLOT(op, off_inputs), *fx = SLOT(op, off_fx_node), *source = SLOT(op, off_source);
        total += LENGTH(head) + LENGTH(SLOT(op, off_name));
        Py_ssize_t k = PyList_GET_SIZE(inputs);
        for (Py_ssize_t j = 0; j < k; j++) {
            if (!PyUnicode_IS_ASCII(PyList_GET_ITEM(inputs, j)))
                Py_RETURN_NONE;
            total += LENGTH(PyList_GET_ITEM(inputs, j)) + (j ? LENGTH(sep) : 0);
        }
        if (fx != Py_None) {
            if (!PyUnicode_IS_ASCII(fx))
                Py_RETURN_NONE;
            total += LENGTH(fx);
        }
        if (source != Py_None) {
            if (!PyUnicode_IS_ASCII(source))
                Py_RETURN_NONE;
            total += LENGTH(source);
        }
        for (int j = 0; j < 4; j++)
            total += LENGTH(PyTuple_GET_ITEM(p, j));
    }
    if (trim < 0 || trim > total)
        Py_RETURN_NONE;
    PyObject *out = PyUnicode_New(total, 127);
    if (out == NULL)
        return NULL;
    Py_UCS1 *w = PyUnicode_1BYTE_DATA(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i), *p = PyList_GET_ITEM(pieces, i);
        PyObject *inputs = SLOT(op, off_inputs), *fx = SLOT(op, off_fx_node), *source = SLOT(op, off_source);
        PUT(head);
        PUT(SLOT(op, off_name));
        PUT(PyTuple_GET_ITEM(p, 0));
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(inputs); j++) {
            if (j)
                PUT(sep);
            PUT(PyList_GET_ITEM(inputs, j));
        }
        PUT(PyTuple_GET_ITEM(p, 1));
        if (fx != Py_None)
            PUT(fx);
        PUT(PyTuple_GET_ITEM(p, 2));
        if (source != Py_None)
            PUT(source);
        PUT(PyTuple_GET_ITEM(p, 3));
    }
    if (trim && PyUnicode_Resize(&out, total - trim) < 0)
        return NULL;
    return out;
}

static Py_ssize_t varint_size(Py_ssize_t n) {
    Py_ssize_t size = 1;
    while (n > 0x7f) {
        n >>= 7;
        size++;
    }
    return size;
}

static unsigned char *put_varint(unsigned char *w, Py_ssize_t n) {
    while (n > 0x7f) {
        *w++ = (unsigned char)((n & 0x7f) | 0x80);
        n >>= 7;
    }
    *w++ = (unsigned char)n;
    return w;
}

/* An entry of fx_entries / source_entries: a str of one byte per character. */
static PyObject *entry_of(PyObject *entries, PyObject *key) {
    PyObject *entry = PyDict_GetItemWithError(entries, key);
    if (entry != NULL && (!PyUnicode_CheckExact(entry) || PyUnicode_KIND(entry) != PyUnicode_1BYTE_KIND))
        return NULL;
    return entry;
}

/* pb_ops(ops, pieces, fx_entries, source_entries) -> bytes | None
 * The GraphDef.op fields (tag 6, length, OpDef) of every op: OpDef.name, pieces[0] (its
 * type), one OpDef.input field per input, pieces[1], the FX node's attr entry
 * (fx_entries[op.fx_node]), pieces[2], the source's (source_entries[op.source]),
 * pieces[3]. Pieces and entries are bytes as latin-1 str; names and inputs ASCII. */
static PyObject *pb_ops(PyObject *self, PyObject *args) {
    PyObject *ops, *pieces, *fx_entries, *source_entries;
    if (!PyArg_ParseTuple(args, "O!OO!O!", &PyList_Type, &ops, &pieces, &PyDict_Type, &fx_entries, &PyDict_Type, &source_entries))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(ops);
    if (!pieces_usable(pieces, n, 0))
        Py_RETURN_NONE;
    Py_ssize_t *sizes = PyMem_Malloc((n ? n : 1) * sizeof(Py_ssize_t));
    if (sizes == NULL)
        return PyErr_NoMemory();
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i), *p = PyList_GET_ITEM(pieces, i);
        if (!op_is_usable(op) || !PyUnicode_IS_ASCII(SLOT(op, off_name)))
            goto fallback;
        PyObject *fx = entry_of(fx_entries, SLOT(op, off_fx_node)), *source = entry_of(source_entries, SLOT(op, off_source));
        if (fx == NULL || source == NULL)
            goto fallback;
        Py_ssize_t size = 1 + varint_size(LENGTH(SLOT(op, off_name))) + LENGTH(SLOT(op, off_name)) + LENGTH(fx) + LENGTH(source);
        PyObject *inputs = SLOT(op, off_inputs);
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(inputs); j++) {
            PyObject *text = PyList_GET_ITEM(inputs, j);
            if (!PyUnicode_IS_ASCII(text))
                goto fallback;
            size += 1 + varint_size(LENGTH(text)) + LENGTH(text);
        }
        for (int j = 0; j < 4; j++)
            size += LENGTH(PyTuple_GET_ITEM(p, j));
        sizes[i] = size;
        total += 1 + varint_size(size) + size;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL) {
        PyMem_Free(sizes);
        return NULL;
    }
    unsigned char *w = (unsigned char *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *op = PyList_GET_ITEM(ops, i), *p = PyList_GET_ITEM(pieces, i), *inputs = SLOT(op, off_inputs);
        *w++ = 0x32; /* GraphDef.op: field 6, length-delimited */
        w = put_varint(w, sizes[i]);
        *w++ = 0x0a; /* OpDef.name: field 1 */
        w = put_varint(w, LENGTH(SLOT(op, off_name)));
        PUT(SLOT(op, off_name));
        PUT(PyTuple_GET_ITEM(p, 0));
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(inputs); j++) {
            PyObject *text = PyList_GET_ITEM(inputs, j);
            *w++ = 0x2a; /* OpDef.input: field 5 */
            w = put_varint(w, LENGTH(text));
            PUT(text);
        }
        PUT(PyTuple_GET_ITEM(p, 1));
        PUT(PyDict_GetItem(fx_entries, SLOT(op, off_fx_node)));
        PUT(PyTuple_GET_ITEM(p, 2));
        PUT(PyDict_GetItem(source_entries, SLOT(op, off_source)));
        PUT(PyTuple_GET_ITEM(p, 3));
    }
    PyMem_Free(sizes);
    return out;
fallback:
    PyMem_Free(sizes);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}


/* copy_ops(ops, rows, names, table, fx_node, source) -> True | None
 * Append to `ops` one new IrOp per template row (type, input positions, attrs, input
 * descs, output descs): named names[k], its inputs table[position], the given
 * provenance; attrs and descs are shared, not copied (see IrOp). */
static int row_usable(PyObject *row, Py_ssize_t table_size) {
    if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) != 5 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(row, 0)) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(row, 1)) || !PyTuple_CheckExact(PyTuple_GET_ITEM(row, 3)) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(row, 4)))
        return 0;
    PyObject *positions = PyTuple_GET_ITEM(row, 1);
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(positions); j++) {
        PyObject *position = PyTuple_GET_ITEM(positions, j);
        if (!PyLong_CheckExact(position))
            return 0;
        Py_ssize_t k = PyLong_AsSsize_t(position);
        if (k < 0 || k >= table_size) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

static PyObject *copy_ops(PyObject *self, PyObject *args) {
    PyObject *ops, *rows, *names, *table, *fx_node, *source;
    if (!PyArg_ParseTuple(args, "O!O!O!O!OO", &PyList_Type, &ops, &PyTuple_Type, &rows, &PyList_Type, &names, &PyList_Type, &table, &fx_node, &source))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(rows), table_size = PyList_GET_SIZE(table);
    if (op_type == NULL || PyList_GET_SIZE(names) != n || (fx_node != Py_None && !PyUnicode_CheckExact(fx_node)) ||
        (source != Py_None && !PyUnicode_CheckExact(source)))
        Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(names, i)) || !row_usable(PyTuple_GET_ITEM(rows, i), table_size))
            Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < table_size; i++)
        if (!PyUnicode_CheckExact(PyList_GET_ITEM(table, i)))
            Py_RETURN_NONE;
    /* Snapshots: allocating the new ops may run the collector, and with it Python code. */
    PyObject *name_items = PyList_AsTuple(names), *table_items = PyList_AsTuple(table), *result = Py_True;
    if (name_items == NULL || table_items == NULL)
        result = NULL;
    for (Py_ssize_t i = 0; i < n && result != NULL; i++) {
        PyObject *row = PyTuple_GET_ITEM(rows, i), *positions = PyTuple_GET_ITEM(row, 1);
        Py_ssize_t k = PyTuple_GET_SIZE(positions);
        PyObject *inputs = PyList_New(k), *op = NULL;
        if (inputs != NULL) {
            for (Py_ssize_t j = 0; j < k; j++)
                PyList_SET_ITEM(inputs, j, Py_NewRef(PyTuple_GET_ITEM(table_items, PyLong_AsSsize_t(PyTuple_GET_ITEM(positions, j)))));
            op = op_type->tp_alloc(op_type, 0);
        }
        if (op == NULL) {
            Py_XDECREF(inputs);
            result = NULL;
            break;
        }
        SLOT(op, off_name) = Py_NewRef(PyTuple_GET_ITEM(name_items, i));
        SLOT(op, off_type) = Py_NewRef(PyTuple_GET_ITEM(row, 0));
        SLOT(op, off_inputs) = inputs;
        SLOT(op, off_attrs) = Py_NewRef(PyTuple_GET_ITEM(row, 2));
        SLOT(op, off_input_desc) = Py_NewRef(PyTuple_GET_ITEM(row, 3));
        SLOT(op, off_output_desc) = Py_NewRef(PyTuple_GET_ITEM(row, 4));
        SLOT(op, off_fx_node) = Py_NewRef(fx_node);
        SLOT(op, off_source) = Py_NewRef(source);
        if (PyList_Append(ops, op) < 0)
            result = NULL;
        Py_DECREF(op);
    }
    Py_XDECREF(name_items);
    Py_XDECREF(table_items);
    return Py_XNewRef(result);
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_O, "bind(IrOp): learn where IrOp keeps the fields read here."},
    {"scan_ops", scan_ops, METH_VARARGS, "scan_ops(ops, end_mark) -> (inputs, plain, fx_nodes, sources) | None"},
    {"identity_groups", identity_groups, METH_O, "identity_groups(ops) -> (index, firsts) | None"},
    {"text_ops", text_ops, METH_VARARGS, "text_ops(ops, pieces, head, sep) -> str | None"},
    {"pb_ops", pb_ops, METH_VARARGS, "pb_ops(ops, pieces, fx_entries, source_entries) -> bytes | None"},
    {"copy_ops", copy_ops, METH_VARARGS, "copy_ops(ops, rows, names, table, fx_node, source) -> True | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speedups", "Per-op loops of the Ascend IR, in C.", -1, methods, NULL, NULL, NULL, NULL};

/* Bumped whenever a function's arguments or results change: fxlab/ir/speedups.py loads
 * only the version it was written for, so a module built from older sources (an
 * editable install not rebuilt after a pull) is left unused rather than misused. */
#define SPEEDUPS_VERSION 1

PyMODINIT_FUNC PyInit__speedups(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "VERSION", SPEEDUPS_VERSION) < 0)
        Py_CLEAR(m);
    return m;
}
