/* Folder listings in C: the hot loop of a tree snapshot, one lstat per name.
 *
 * `listing.py` holds the same loops in Python and the contract they share; this file removes
 * the interpreter's cost per name (about 2 of the 3.5 microseconds os.stat takes) and stats a
 * batch of folders on a few threads of its own with the GIL released, so a walk of a tree is
 * not bound to one core. Built where a C compiler is at hand (`setup.py`, optional); without
 * it, `listing.py` runs its own loops with the same results.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_THREADS 16

typedef struct {
    long long size, mtime_ns, mode, ctime_ns;
    unsigned long long inode;
} Key;

typedef struct {
    char *name; /* owned when the folder was read, else a name the caller passed */
    Key key;
} Found;

/* One folder: its descriptor, and either the names of its last listing to lstat again (known
 * unchanged) or none (read the folder). What it found, or why not: `gone` (a known name is
 * missing: list it afresh), `error` (an errno from reading it), `no_memory`.
 *
 * `previous` is a copy of the caller's list, made before the GIL is released: another thread
 * may change the caller's list meanwhile, and its items (tuples, which cannot change) are held
 * by the copy, so what is compared afterwards is what the names were taken from. */
typedef struct {
    int fd;
    Py_ssize_t count; /* known names; -1: read the folder */
    const char **names;
    PyObject *previous; /* owned copy of the previous listing, or NULL */
    Found *found;
    size_t used;
    int gone, error, no_memory;
} Job;

static void key_of(const struct stat *info, Key *key) {
    key->size = (long long)info->st_size;
    key->mtime_ns = (long long)info->st_mtim.tv_sec * 1000000000LL + info->st_mtim.tv_nsec;
    key->inode = (unsigned long long)info->st_ino;
    key->mode = (long long)info->st_mode;
    key->ctime_ns = (long long)info->st_ctim.tv_sec * 1000000000LL + info->st_ctim.tv_nsec;
}

static void by_names(Job *job) {
    struct stat info;
    job->found = malloc(sizeof(Found) * (size_t)(job->count > 0 ? job->count : 1));
    if (job->found == NULL) {
        job->no_memory = 1;
        return;
    }
    for (Py_ssize_t index = 0; index < job->count; index++) {
        if (fstatat(job->fd, job->names[index], &info, AT_SYMLINK_NOFOLLOW) != 0) {
            job->gone = 1;
            return;
        }
        job->found[index].name = (char *)job->names[index];
        key_of(&info, &job->found[index].key);
    }
    job->used = (size_t)job->count;
}

static void read_folder(Job *job) {
    /* A descriptor of its own, so the caller's keeps its offset and stays open. */
    int own = openat(job->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *folder = own < 0 ? NULL : fdopendir(own);
    if (folder == NULL) {
        job->error = errno;
        if (own >= 0) {
            close(own);
        }
        return;
    }
    size_t room = 0;
    struct dirent *child;
    struct stat info;
    errno = 0;
    while ((child = readdir(folder)) != NULL) {
        const char *name = child->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
            continue;
        }
        if (fstatat(job->fd, name, &info, AT_SYMLINK_NOFOLLOW) != 0) {
            errno = 0;
            continue; /* gone between the listing and its stat */
        }
        if (job->used == room) {
            size_t larger = room ? room * 2 : 64;
            Found *grown = realloc(job->found, sizeof(Found) * larger);
            if (grown == NULL) {
                job->no_memory = 1;
                break;
            }
            job->found = grown;
            room = larger;
        }
        char *copy = strdup(name);
        if (copy == NULL) {
            job->no_memory = 1;
            break;
        }
        job->found[job->used].name = copy;
        key_of(&info, &job->found[job->used].key);
        job->used++;
        errno = 0;
    }
    if (child == NULL && errno != 0 && !job->no_memory) {
        job->error = errno;
    }
    closedir(folder);
}

static void run_job(Job *job) {
    if (job->count < 0) {
        read_folder(job);
    } else {
        by_names(job);
    }
}

typedef struct {
    Job *jobs;
    Py_ssize_t count;
    atomic_long next;
} Queue;

static void *worker(void *argument) {
    Queue *queue = argument;
    for (;;) {
        long index = atomic_fetch_add(&queue->next, 1);
        if (index >= queue->count) {
            return NULL;
        }
        run_job(&queue->jobs[index]);
    }
}

/* Runs every job, on `threads` threads (this one among them). */
static void run_jobs(Job *jobs, Py_ssize_t count, int threads) {
    Queue queue = {jobs, count, 0};
    pthread_t started[MAX_THREADS];
    int helpers = 0;
    if (threads > count) {
        threads = (int)count;
    }
    for (int index = 1; index < threads && index < MAX_THREADS; index++) {
        if (pthread_create(&started[helpers], NULL, worker, &queue) != 0) {
            break; /* fewer threads: this one does the rest */
        }
        helpers++;
    }
    worker(&queue);
    for (int index = 0; index < helpers; index++) {
        pthread_join(started[index], NULL);
    }
}

/* Whether `item`, a (name, size, mtime_ns, inode, mode, ctime_ns) tuple, has `key`. */
static int has_key(PyObject *item, const Key *key) {
    int same = PyLong_AsLongLong(PyTuple_GET_ITEM(item, 1)) == key->size &&
               PyLong_AsLongLong(PyTuple_GET_ITEM(item, 2)) == key->mtime_ns &&
               PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(item, 3)) == key->inode &&
               PyLong_AsLongLong(PyTuple_GET_ITEM(item, 4)) == key->mode &&
               PyLong_AsLongLong(PyTuple_GET_ITEM(item, 5)) == key->ctime_ns;
    if (PyErr_Occurred()) { /* a value that is no such integer is a difference */
        PyErr_Clear();
        same = 0;
    }
    return same;
}

/* Whether the keys found are those of the job's previous listing, entry by entry. */
static int same_keys(Job *job) {
    for (size_t index = 0; index < job->used; index++) {
        if (!has_key(PyList_GET_ITEM(job->previous, (Py_ssize_t)index), &job->found[index].key)) {
            return 0;
        }
    }
    return 1;
}

/* Whether the caller's list `given` still holds the items of the job's copy, in order. */
static int unchanged(Job *job, PyObject *given) {
    Py_ssize_t count = PyList_GET_SIZE(job->previous);
    if (PyList_GET_SIZE(given) != count) {
        return 0;
    }
    for (Py_ssize_t index = 0; index < count; index++) {
        if (PyList_GET_ITEM(given, index) != PyList_GET_ITEM(job->previous, index)) {
            return 0;
        }
    }
    return 1;
}

/* The job's result as `listing.py` has it: a list of (name, size, mtime_ns, inode, mode,
 * ctime_ns) (the previous listing itself when every key is as it was, `given` when no other
 * thread changed it meanwhile, else a new list holding each of the previous entries whose key
 * is as it was, so the caller can tell the changed ones by identity), None for a known name
 * gone, the OSError that reading the folder met (returned, for the caller to raise in that
 * folder's turn), or NULL with an exception set. */
static PyObject *job_result(Job *job, PyObject *given) {
    PyObject *previous = job->previous;
    if (job->no_memory) {
        return PyErr_NoMemory();
    }
    if (job->error != 0) {
        return PyObject_CallFunction(PyExc_OSError, "is", job->error, strerror(job->error));
    }
    if (job->gone) {
        return Py_NewRef(Py_None);
    }
    if (previous != NULL && same_keys(job)) {
        return Py_NewRef(unchanged(job, given) ? given : previous);
    }
    PyObject *result = PyList_New((Py_ssize_t)job->used);
    for (size_t index = 0; result != NULL && index < job->used; index++) {
        Found *found = &job->found[index];
        PyObject *was = previous != NULL ? PyList_GET_ITEM(previous, (Py_ssize_t)index) : NULL;
        if (was != NULL && has_key(was, &found->key)) {
            PyList_SET_ITEM(result, (Py_ssize_t)index, Py_NewRef(was));
            continue;
        }
        PyObject *name = was != NULL ? Py_NewRef(PyTuple_GET_ITEM(was, 0))
                                     : PyUnicode_DecodeFSDefault(found->name);
        PyObject *item = name == NULL ? NULL
                                      : Py_BuildValue("(OLLKLL)", name, found->key.size,
                                                      found->key.mtime_ns, found->key.inode,
                                                      found->key.mode, found->key.ctime_ns);
        Py_XDECREF(name);
        if (item == NULL) {
            Py_CLEAR(result);
            break;
        }
        PyList_SET_ITEM(result, (Py_ssize_t)index, item);
    }
    return result;
}

static void free_job(Job *job) {
    if (job->count < 0) {
        for (size_t index = 0; index < job->used; index++) {
            free(job->found[index].name);
        }
    }
    free(job->found);
    PyMem_Free((void *)job->names);
    Py_CLEAR(job->previous);
}

/* Fills `job` from (fd, previous listing or None); the names' encoded bytes are appended to
 * `keep`. */
static int prepare(Job *job, PyObject *fd_object, PyObject *previous, PyObject *keep) {
    memset(job, 0, sizeof(Job));
    long fd = PyLong_AsLong(fd_object);
    if (fd == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (fd < 0 || fd > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "a folder's descriptor is out of range");
        return -1;
    }
    job->fd = (int)fd;
    if (previous == Py_None) {
        job->count = -1;
        return 0;
    }
    if (!PyList_Check(previous)) {
        PyErr_SetString(PyExc_TypeError, "a previous listing is a list of stat keys or None");
        return -1;
    }
    job->previous = PyList_GetSlice(previous, 0, PY_SSIZE_T_MAX);
    if (job->previous == NULL) {
        return -1;
    }
    previous = job->previous;
    job->count = PyList_GET_SIZE(previous);
    job->names = PyMem_Malloc(sizeof(char *) * (size_t)(job->count > 0 ? job->count : 1));
    if (job->names == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t index = 0; index < job->count; index++) {
        PyObject *item = PyList_GET_ITEM(previous, index);
        if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 6 ||
            !PyUnicode_Check(PyTuple_GET_ITEM(item, 0))) {
            PyErr_SetString(PyExc_TypeError, "a stat key is (name, size, mtime_ns, inode, mode, "
                                             "ctime_ns)");
            return -1;
        }
        PyObject *bytes = PyUnicode_EncodeFSDefault(PyTuple_GET_ITEM(item, 0));
        if (bytes == NULL || PyList_Append(keep, bytes) != 0) {
            Py_XDECREF(bytes);
            return -1;
        }
        Py_DECREF(bytes);
        job->names[index] = PyBytes_AS_STRING(bytes); /* alive in `keep` */
    }
    return 0;
}

/* listings(jobs, threads) -> list: for each (fd, previous) of `jobs`, the folder's listing:
 * each name of the previous listing lstat'ed relative to fd in order (None when one is gone;
 * the previous list itself when nothing changed), or with previous None, each name the folder
 * lists, in its order (a name gone before its stat left out); an OSError instance where the
 * folder could not be read. The
 * folders are stat'ed on up to `threads` threads, the GIL released; the descriptors are left
 * open. */
static PyObject *listings(PyObject *self, PyObject *args) {
    PyObject *given;
    int threads;
    if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &given, &threads)) {
        return NULL;
    }
    /* A copy, held until the results are made: the caller's list may change meanwhile. */
    PyObject *batch = PyList_GetSlice(given, 0, PY_SSIZE_T_MAX);
    if (batch == NULL) {
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(batch);
    Job *jobs = PyMem_Calloc((size_t)(count > 0 ? count : 1), sizeof(Job));
    PyObject *keep = PyList_New(0);
    PyObject *results = NULL;
    Py_ssize_t prepared = 0;
    if (jobs == NULL || keep == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (; prepared < count; prepared++) {
        PyObject *pair = PyList_GET_ITEM(batch, prepared);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "each job is a tuple (fd, previous listing or None)");
            goto done;
        }
        if (prepare(&jobs[prepared], PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1),
                    keep) != 0) {
            prepared++; /* its names, if any, are freed below */
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    run_jobs(jobs, count, threads < 1 ? 1 : threads);
    Py_END_ALLOW_THREADS
    results = PyList_New(count);
    for (Py_ssize_t index = 0; results != NULL && index < count; index++) {
        PyObject *previous = PyTuple_GET_ITEM(PyList_GET_ITEM(batch, index), 1);
        PyObject *result = job_result(&jobs[index], previous == Py_None ? NULL : previous);
        if (result == NULL) {
            Py_CLEAR(results);
            break;
        }
        PyList_SET_ITEM(results, index, result);
    }
done:
    for (Py_ssize_t index = 0; jobs != NULL && index < prepared; index++) {
        free_job(&jobs[index]);
    }
    PyMem_Free(jobs);
    Py_XDECREF(keep);
    Py_DECREF(batch);
    return results;
}

static PyMethodDef methods[] = {
    {"listings", listings, METH_VARARGS,
     "listings(jobs, threads): each (fd, previous listing or None) folder's listing, on up to "
     "`threads` threads."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_listing",
    .m_doc = "Folder listings in C (see listing.py).",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__listing(void) { return PyModule_Create(&module); }
