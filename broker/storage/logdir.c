/* A log directory: the partition logs it holds, its lock, checkpoint, marker and flusher
 * (see logdir.h). */
#include "logdir.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "cluster.h"
#include "znode.h"
#include "err.h"
#include "logging.h"
#include "props.h"

typedef struct ld_entry {
    struct ld_entry *next; /* hash chain */
    sf_log_t *log;
    int busy;    /* the flusher is working on it (guarded by ld->mu) */
    int created; /* new: its directory awaits the flusher's fsync (guarded by ld->mu) */
} ld_entry_t;

/* An entry of a checkpoint file (recovery point or log start offset). */
typedef struct ld_ckpt {
    char *topic;
    int32_t partition;
    int64_t offset;
} ld_ckpt_t;

struct sf_logdir {
    char *path;
    sf_log_config_t defaults;
    int lock_fd;
    int was_clean;
    pthread_mutex_t mu;   /* the table and the busy flags */
    pthread_cond_t cond;  /* busy flags cleared; stop requested */
    pthread_mutex_t ckpt_mu; /* one checkpoint writer at a time */
    ld_entry_t **buckets;
    size_t nbuckets, count;
    pthread_t flusher;
    int flusher_running, stop;
    int64_t interval_ms;
    int ckpt_dirty; /* the set of logs changed since the last checkpoint */
    char *start_ckpt; /* the log-start-offset checkpoint last written (guarded by ckpt_mu) */
    char *hw_ckpt;    /* the replication-offset-checkpoint likewise */
    int64_t hw_ckpt_ms; /* when it was last looked at (guarded by ckpt_mu) */
};

/* ---- the table ---- */

static ld_entry_t **entry_slot(sf_logdir_t *ld, const char *topic, int32_t partition) {
    ld_entry_t **pp = &ld->buckets[sf_log_key_hash(topic, partition) % ld->nbuckets];
    for (; *pp; pp = &(*pp)->next)
        if (sf_log_partition((*pp)->log) == partition && !strcmp(sf_log_topic((*pp)->log), topic))
            return pp;
    return pp;
}

static int table_grow(sf_logdir_t *ld) {
    size_t n = ld->nbuckets * 2, i;
    ld_entry_t **b = calloc(n, sizeof(*b));
    if (!b)
        return SF_ERR_NOMEM;
    for (i = 0; i < ld->nbuckets; i++) {
        ld_entry_t *e = ld->buckets[i], *next;
        for (; e; e = next) {
            size_t h = sf_log_key_hash(sf_log_topic(e->log), sf_log_partition(e->log)) % n;
            next = e->next;
            e->next = b[h];
            b[h] = e;
        }
    }
    free(ld->buckets);
    ld->buckets = b;
    ld->nbuckets = n;
    return SF_OK;
}

/* Add @log (called with ld->mu held); @created: a new log whose files the flusher makes
 * durable. */
static int table_add(sf_logdir_t *ld, sf_log_t *log, int created) {
    ld_entry_t *e = calloc(1, sizeof(*e)), **pp;
    if (!e)
        return SF_ERR_NOMEM;
    if (ld->count >= ld->nbuckets)
        (void)table_grow(ld); /* longer chains if it fails: still correct */
    e->log = log;
    e->created = created;
    pp = entry_slot(ld, sf_log_topic(log), sf_log_partition(log));
    e->next = NULL;
    *pp = e;
    ld->count++;
    ld->ckpt_dirty = 1;
    return SF_OK;
}

/* ---- names ---- */

/* "<topic>-<partition>", split at the last '-'. @topic gets a copy (size @tsize). */
static int parse_partition_dir(const char *name, char *topic, size_t tsize, int32_t *partition) {
    const char *dash = strrchr(name, '-'), *p;
    int64_t v = 0;
    size_t tlen;
    if (!dash || dash == name || dash[1] == '\0')
        return 0;
    for (p = dash + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
        if (v > INT32_MAX)
            return 0;
    }
    tlen = (size_t)(dash - name);
    if (tlen >= tsize)
        return 0;
    memcpy(topic, name, tlen);
    topic[tlen] = '\0';
    if (!sf_znode_topic_name_valid(topic))
        return 0;
    *partition = (int32_t)v;
    return 1;
}

/* Remove a directory and the files in it (partition directories hold only files). */
static int remove_tree(const char *path) {
    DIR *d = opendir(path);
    struct dirent *de;
    char file[4200];
    int rc = SF_OK;
    if (!d)
        return errno == ENOENT ? SF_OK : SF_ERR_IO;
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(file, sizeof(file), "%s/%s", path, de->d_name);
        if (lstat(file, &st) == 0 && S_ISDIR(st.st_mode))
            rc = remove_tree(file) != SF_OK ? SF_ERR_IO : rc;
        else if (unlink(file) < 0)
            rc = SF_ERR_IO;
    }
    closedir(d);
    if (rmdir(path) < 0)
        rc = SF_ERR_IO;
    return rc;
}

/* ---- checkpoint files: recovery points, log start offsets ---- */

static void ckpt_free(ld_ckpt_t *v, size_t n) {
    size_t i;
    for (i = 0; i < n; i++)
        free(v[i].topic);
    free(v);
}

/* A decimal integer in [0, @max] after optional blanks, followed by a blank or, when @last,
 * by nothing but white space; *@pp moves past it. */
static int ckpt_num(const char **pp, long long max, int last, long long *out) {
    const char *p = *pp + strspn(*pp, " \t");
    char *end;
    long long v;
    if (*p < '0' || *p > '9')
        return 0;
    errno = 0;
    v = strtoll(p, &end, 10);
    if (errno || v > max)
        return 0;
    if (last ? end[strspn(end, " \t\r\n")] != '\0' : (*end != ' ' && *end != '\t'))
        return 0;
    *out = v;
    *pp = end;
    return 1;
}

/* Read the checkpoint file @dir/@name: "0\n<count>\n<topic> <partition> <offset>\n...". A
 * missing file is an empty list; a malformed one is reported (with @consequence, what
 * ignoring it means) and ignored. Numbers out of range are malformed; the array grows with
 * the lines actually read, not with the count the file claims. */
static void ckpt_read(const char *dir, const char *name, const char *consequence,
                      ld_ckpt_t **out, size_t *nout) {
    char path[4200], line[512], *topic;
    const char *p;
    FILE *f;
    long long version, count, i, part, off;
    ld_ckpt_t *v = NULL;
    size_t n = 0, cap = 0, tlen;

    *out = NULL;
    *nout = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "re");
    if (!f)
        return;
    if (!fgets(line, sizeof(line), f) || !(p = line, ckpt_num(&p, 0, 1, &version)) ||
        !fgets(line, sizeof(line), f) || !(p = line, ckpt_num(&p, INT32_MAX, 1, &count)))
        goto bad;
    for (i = 0; i < count; i++) {
        if (!fgets(line, sizeof(line), f))
            goto bad;
        topic = line + strspn(line, " \t");
        tlen = strcspn(topic, " \t\r\n");
        p = topic + tlen;
        if (!ckpt_num(&p, INT32_MAX, 0, &part) || !ckpt_num(&p, INT64_MAX - 1, 1, &off))
            goto bad;
        topic[tlen] = '\0';
        if (!sf_znode_topic_name_valid(topic))
            goto bad;
        if (n == cap) {
            ld_ckpt_t *g;
            cap = cap ? cap * 2 : 16;
            g = realloc(v, cap * sizeof(*v));
            if (!g)
                goto bad;
            v = g;
        }
        v[n].topic = strdup(topic);
        if (!v[n].topic)
            goto bad;
        v[n].partition = (int32_t)part;
        v[n].offset = off;
        n++;
    }
    fclose(f);
    *out = v;
    *nout = n;
    return;
bad:
    sf_log(SF_LOG_WARNING, "STORAGE", "%s is malformed; %s", path, consequence);
    ckpt_free(v, n);
    fclose(f);
}

static const ld_ckpt_t *ckpt_find(const ld_ckpt_t *v, size_t n, const char *topic,
                                  int32_t partition) {
    size_t i;
    for (i = 0; i < n; i++)
        if (v[i].partition == partition && !strcmp(v[i].topic, topic))
            return &v[i];
    return NULL;
}

/* Write @len bytes to @dir/@name atomically: tmp file, fsync, rename, fsync dir. */
static int write_atomic(const char *dir, const char *name, const char *data, size_t len) {
    char tmp[4200], path[4200];
    int fd, rc = SF_OK;
    size_t done = 0;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/%s.tmp", dir, name);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return SF_ERR_IO;
    while (done < len) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = SF_ERR_IO;
            break;
        }
        done += (size_t)w;
    }
    if (rc == SF_OK && fsync(fd) < 0)
        rc = SF_ERR_IO;
    if (close(fd) < 0)
        rc = SF_ERR_IO;
    if (rc == SF_OK && rename(tmp, path) < 0)
        rc = SF_ERR_IO;
    if (rc == SF_OK)
        rc = sf_log_fsync_dir(dir);
    if (rc != SF_OK) {
        sf_log(SF_LOG_ERR, "STORAGE", "cannot write %s: %s", path, strerror(errno));
        (void)unlink(tmp);
    }
    return rc;
}

/* What a checkpoint file lists for @log: 1 and *@offset, or 0 to leave @log out. */
typedef int (*ckpt_value_fn)(sf_log_t *log, int64_t *offset);

static int recovery_point_value(sf_log_t *log, int64_t *offset) {
    *offset = sf_log_recovery_point(log);
    return 1;
}

/* As Kafka, only the logs whose start offset is past their oldest segment (DeleteRecords):
 * for the others the segments say where they start. Both values only grow and start >= base,
 * so reading the base first never leaves out a log whose start is past its base; at worst
 * it lists one whose start just became its base (harmless). */
static int start_offset_value(sf_log_t *log, int64_t *offset) {
    int64_t base = sf_log_base_offset(log);
    *offset = sf_log_start_offset(log);
    return *offset > base;
}

/* Only the high watermarks replication knows (or the checkpoint gave and nothing replaced
 * yet): one that follows the LEO promises nothing, and must not become one after a crash. */
static int hw_value(sf_log_t *log, int64_t *offset) {
    return sf_log_known_high_watermark(log, offset);
}

/* Room for "0\n<count>\n" and for one "<topic> <partition> <offset>\n" line (a topic name
 * has at most 249 characters). */
#define CKPT_HEADER_MAX 32
#define CKPT_LINE_MAX 300

/* Format the checkpoint text of what @value lists, into a new NUL-terminated buffer *@out
 * (freed by the caller) of *@len bytes. Takes ld->mu. @return SF_OK or SF_ERR_NOMEM. */
static int ckpt_format(sf_logdir_t *ld, ckpt_value_fn value, char **out, size_t *len) {
    char *buf, header[CKPT_HEADER_MAX];
    size_t cap, pos = CKPT_HEADER_MAX, n = 0, hlen, i;

    pthread_mutex_lock(&ld->mu);
    cap = CKPT_HEADER_MAX + ld->count * CKPT_LINE_MAX + 1;
    buf = malloc(cap);
    if (!buf) {
        pthread_mutex_unlock(&ld->mu);
        return SF_ERR_NOMEM;
    }
    /* The lines first, after room for the header: it needs their count. */
    for (i = 0; i < ld->nbuckets; i++) {
        ld_entry_t *e;
        for (e = ld->buckets[i]; e; e = e->next) {
            int64_t offset;
            if (!value(e->log, &offset))
                continue;
            pos += (size_t)snprintf(buf + pos, cap - pos, "%s %d %" PRId64 "\n",
                                    sf_log_topic(e->log), (int)sf_log_partition(e->log), offset);
            assert(pos < cap);
            n++;
        }
    }
    pthread_mutex_unlock(&ld->mu);
    hlen = (size_t)snprintf(header, sizeof(header), "0\n%zu\n", n);
    assert(hlen < CKPT_HEADER_MAX);
    memmove(buf + hlen, buf + CKPT_HEADER_MAX, pos - CKPT_HEADER_MAX);
    memcpy(buf, header, hlen);
    *len = hlen + pos - CKPT_HEADER_MAX;
    buf[*len] = '\0';
    *out = buf;
    return SF_OK;
}

/* Write the checkpoint file @name listing what @value gives (tmp file, fsync, rename, fsync
 * dir). With @last (a text previously written, or NULL), nothing is written when the text is
 * unchanged, and a written text is kept in *@last. Called with ld->ckpt_mu held.
 * @return SF_OK, SF_ERR_IO or SF_ERR_NOMEM. */
static int ckpt_write(sf_logdir_t *ld, const char *name, ckpt_value_fn value, char **last) {
    char *buf;
    size_t len;
    int rc = ckpt_format(ld, value, &buf, &len);
    if (rc != SF_OK)
        return rc;
    if (last && *last && !strcmp(*last, buf)) {
        free(buf);
        return SF_OK;
    }
    rc = write_atomic(ld->path, name, buf, len);
    if (rc == SF_OK && last) {
        free(*last);
        *last = buf;
        buf = NULL;
    }
    free(buf);
    return rc;
}

/* Write the log-start-offset checkpoint if a start offset moved since the last write. */
static int start_ckpt_write(sf_logdir_t *ld) {
    int rc;
    pthread_mutex_lock(&ld->ckpt_mu);
    rc = ckpt_write(ld, SF_LOGDIR_LOG_START_CHECKPOINT, start_offset_value, &ld->start_ckpt);
    pthread_mutex_unlock(&ld->ckpt_mu);
    return rc;
}

/* Write the replication-offset-checkpoint if a high watermark moved, and at most every
 * SF_LOGDIR_HW_CHECKPOINT_MS unless @now (Kafka's replica.high.watermark.checkpoint.interval.ms
 * default). Called with ld->ckpt_mu held. */
static int hw_ckpt_write(sf_logdir_t *ld, int now) {
    int64_t ms = sf_clock_mono_ms();
    if (!now && ms - ld->hw_ckpt_ms < SF_LOGDIR_HW_CHECKPOINT_MS)
        return SF_OK;
    ld->hw_ckpt_ms = ms;
    return ckpt_write(ld, SF_LOGDIR_HW_CHECKPOINT, hw_value, &ld->hw_ckpt);
}

/* The checkpoints; the high watermarks' at once with @hw_now, else on their own period. */
static int write_checkpoints(sf_logdir_t *ld, int hw_now) {
    int rc, r;

    pthread_mutex_lock(&ld->ckpt_mu);
    pthread_mutex_lock(&ld->mu);
    ld->ckpt_dirty = 0;
    pthread_mutex_unlock(&ld->mu);
    rc = ckpt_write(ld, SF_LOGDIR_RECOVERY_CHECKPOINT, recovery_point_value, NULL);
    if (rc != SF_OK) {
        pthread_mutex_lock(&ld->mu);
        ld->ckpt_dirty = 1;
        pthread_mutex_unlock(&ld->mu);
    }
    /* A failure here is retried by the flusher's next round (the text differs). */
    r = ckpt_write(ld, SF_LOGDIR_LOG_START_CHECKPOINT, start_offset_value, &ld->start_ckpt);
    if (r == SF_OK)
        r = hw_ckpt_write(ld, hw_now);
    pthread_mutex_unlock(&ld->ckpt_mu);
    return rc != SF_OK ? rc : r;
}

int sf_logdir_write_checkpoint(sf_logdir_t *ld) {
    return write_checkpoints(ld, 1);
}

/* ---- open ---- */

/* Create (if its parent exists) and check the directory; fill @errstr on failure. */
static int prepare_dir(const char *path, char *errstr, size_t errstr_size) {
    struct stat st;
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        if (errno == ENOENT)
            sf_errf(errstr, errstr_size,
                   "log directory %s cannot be created: its parent directory does not exist",
                   path);
        else
            sf_errf(errstr, errstr_size, "log directory %s cannot be created: %s", path,
                   strerror(errno));
        return SF_ERR_IO;
    }
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
        sf_errf(errstr, errstr_size, "log directory %s is not a directory", path);
        return SF_ERR_IO;
    }
    if (access(path, R_OK | W_OK | X_OK) < 0) {
        sf_errf(errstr, errstr_size, "log directory %s is not writable by this process: %s", path,
               strerror(errno));
        return SF_ERR_IO;
    }
    return SF_OK;
}

/* Start @log at its checkpointed start offset @offset, clamped to [its oldest segment's
 * base, its LEO] (a crash can leave a log shorter than its checkpoint). Segments wholly
 * below it (a deletion that did not reach the disk) are removed. Sets *@clamped when the
 * checkpointed value had to be lowered. @return SF_OK or SF_ERR_NOMEM. */
static int start_at_checkpoint(sf_log_t *log, int64_t offset, int *clamped) {
    int64_t leo = sf_log_end_offset(log);
    int rc;
    if (offset > leo) {
        sf_log(SF_LOG_WARNING, "STORAGE",
               "%s: log start offset %" PRId64 " in the checkpoint is past the log end offset %"
               PRId64 "; starting at the end",
               sf_log_path(log), offset, leo);
        offset = leo;
        *clamped = 1;
    }
    /* Freshly opened, the high watermark is the LEO: only the clamp above can refuse it. */
    rc = sf_log_delete_records(log, offset, NULL);
    if (rc == SF_ERR_IO) /* the start moved; the file left over is logged */
        rc = SF_OK;
    return rc;
}

/* The checkpoints read at open: recovery points, start offsets, high watermarks. */
typedef struct ld_ckpts {
    ld_ckpt_t *rp, *start, *hw;
    size_t nrp, nstart, nhw;
} ld_ckpts_t;

static int open_logs(sf_logdir_t *ld, const ld_ckpts_t *ck, int *clamped, char *errstr,
                     size_t errstr_size) {
    DIR *d = opendir(ld->path);
    struct dirent *de;
    char topic[256], sub[4200];
    int rc = SF_OK;

    if (!d) {
        sf_errf(errstr, errstr_size, "cannot read log directory %s: %s", ld->path,
               strerror(errno));
        return SF_ERR_IO;
    }
    while ((de = readdir(d)) != NULL) {
        struct stat st;
        int32_t partition;
        int64_t rp;
        const ld_ckpt_t *c;
        sf_log_t *log;
        size_t nlen = strlen(de->d_name);

        if (de->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", ld->path, de->d_name);
        if (lstat(sub, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        if (nlen > 7 && !strcmp(de->d_name + nlen - 7, "-delete")) {
            sf_log(SF_LOG_INFO, "STORAGE", "removing %s (a deletion left unfinished)", sub);
            (void)remove_tree(sub);
            continue;
        }
        if (!parse_partition_dir(de->d_name, topic, sizeof(topic), &partition)) {
            sf_log(SF_LOG_WARNING, "STORAGE", "ignoring %s: not a <topic>-<partition> directory",
                   sub);
            continue;
        }
        if (ld->was_clean)
            rp = INT64_MAX;
        else
            rp = (c = ckpt_find(ck->rp, ck->nrp, topic, partition)) ? c->offset : 0;
        rc = sf_log_open(ld->path, topic, partition, &ld->defaults, rp, &log);
        if (rc != SF_OK) {
            sf_errf(errstr, errstr_size, "cannot open the log in %s: %s", sub, sf_err_str(rc));
            break;
        }
        if ((c = ckpt_find(ck->hw, ck->nhw, topic, partition)) != NULL)
            sf_log_set_checkpointed_high_watermark(log, c->offset);
        if ((c = ckpt_find(ck->start, ck->nstart, topic, partition)) != NULL &&
            (rc = start_at_checkpoint(log, c->offset, clamped)) != SF_OK) {
            sf_log_close(log);
            sf_errf(errstr, errstr_size, "cannot set the log start offset of %s: %s", sub,
                   sf_err_str(rc));
            break;
        }
        pthread_mutex_lock(&ld->mu);
        rc = table_add(ld, log, 0);
        pthread_mutex_unlock(&ld->mu);
        if (rc != SF_OK) {
            sf_log_close(log);
            sf_errf(errstr, errstr_size, "out of memory opening %s", sub);
            break;
        }
    }
    closedir(d);
    return rc;
}

static void close_logs(sf_logdir_t *ld) {
    size_t i;
    for (i = 0; i < ld->nbuckets; i++) {
        ld_entry_t *e = ld->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            sf_log_close(e->log);
            free(e);
        }
        ld->buckets[i] = NULL;
    }
    ld->count = 0;
}

static void logdir_free(sf_logdir_t *ld) {
    if (!ld)
        return;
    close_logs(ld);
    free(ld->buckets);
    if (ld->lock_fd >= 0)
        close(ld->lock_fd); /* releases the flock */
    pthread_mutex_destroy(&ld->mu);
    pthread_mutex_destroy(&ld->ckpt_mu);
    pthread_cond_destroy(&ld->cond);
    free(ld->start_ckpt);
    free(ld->hw_ckpt);
    free(ld->path);
    free(ld);
}

int sf_logdir_open(const char *path, const sf_log_config_t *defaults, sf_logdir_t **out,
                   char *errstr, size_t errstr_size) {
    sf_logdir_t *ld;
    char file[4200];
    ld_ckpts_t ck;
    int rc, clamped = 0;

    *out = NULL;
    rc = prepare_dir(path, errstr, errstr_size);
    if (rc != SF_OK)
        return rc;
    ld = calloc(1, sizeof(*ld));
    if (!ld) {
        sf_errf(errstr, errstr_size, "out of memory opening log directory %s", path);
        return SF_ERR_NOMEM;
    }
    ld->lock_fd = -1;
    pthread_mutex_init(&ld->mu, NULL);
    pthread_mutex_init(&ld->ckpt_mu, NULL);
    pthread_cond_init(&ld->cond, NULL);
    ld->defaults = *defaults;
    ld->path = strdup(path);
    ld->nbuckets = 64;
    ld->buckets = calloc(ld->nbuckets, sizeof(*ld->buckets));
    if (!ld->path || !ld->buckets) {
        sf_errf(errstr, errstr_size, "out of memory opening log directory %s", path);
        rc = SF_ERR_NOMEM;
        goto err;
    }

    snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_LOCK_FILE);
    ld->lock_fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (ld->lock_fd < 0) {
        sf_errf(errstr, errstr_size, "cannot create the lock file %s: %s", file, strerror(errno));
        rc = SF_ERR_IO;
        goto err;
    }
    if (flock(ld->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK)
            sf_errf(errstr, errstr_size,
                   "log directory %s is in use by another process (it holds the lock on %s)",
                   path, file);
        else
            sf_errf(errstr, errstr_size, "cannot lock %s: %s", file, strerror(errno));
        rc = errno == EWOULDBLOCK ? SF_ERR_STATE : SF_ERR_IO;
        goto err;
    }

    /* The marker says every log was flushed at the last shutdown. Remove it now: a crash
     * from here on must lead to recovery. */
    snprintf(file, sizeof(file), "%s/%s", path, SF_LOGDIR_CLEAN_MARKER);
    ld->was_clean = access(file, F_OK) == 0;
    if (ld->was_clean) {
        if (unlink(file) < 0 || sf_log_fsync_dir(path) != SF_OK) {
            sf_errf(errstr, errstr_size, "cannot remove the clean-shutdown marker %s: %s", file,
                   strerror(errno));
            rc = SF_ERR_IO;
            goto err;
        }
    }
    memset(&ck, 0, sizeof(ck));
    if (!ld->was_clean)
        ckpt_read(path, SF_LOGDIR_RECOVERY_CHECKPOINT, "recovering every log from its start",
                  &ck.rp, &ck.nrp);
    /* Start offsets and high watermarks matter after a clean shutdown too. */
    ckpt_read(path, SF_LOGDIR_LOG_START_CHECKPOINT, "every log starts at its oldest segment",
              &ck.start, &ck.nstart);
    ckpt_read(path, SF_LOGDIR_HW_CHECKPOINT, "high watermarks are learnt from the ISR again",
              &ck.hw, &ck.nhw);
    sf_log(SF_LOG_INFO, "STORAGE", "loading logs in %s (%s shutdown)", path,
           ld->was_clean ? "clean" : "unclean");
    rc = open_logs(ld, &ck, &clamped, errstr, errstr_size);
    ckpt_free(ck.rp, ck.nrp);
    ckpt_free(ck.start, ck.nstart);
    ckpt_free(ck.hw, ck.nhw);
    if (rc != SF_OK)
        goto err;
    /* A start offset lowered to a shorter log's end must not come back with the next crash
     * once appends pass the old value: rewrite the file before any append. */
    if (clamped && (rc = start_ckpt_write(ld)) != SF_OK) {
        sf_errf(errstr, errstr_size, "cannot write %s/%s: %s", path,
               SF_LOGDIR_LOG_START_CHECKPOINT, sf_err_str(rc));
        goto err;
    }
    *out = ld;
    return SF_OK;

err:
    logdir_free(ld);
    return rc;
}

const char *sf_logdir_path(const sf_logdir_t *ld) {
    return ld->path;
}

int sf_logdir_was_clean(const sf_logdir_t *ld) {
    return ld->was_clean;
}

/* ---- meta.properties ---- */

int sf_logdir_check_broker_id(sf_logdir_t *ld, int32_t broker_id, char *errstr,
                              size_t errstr_size) {
    char file[4200], buf[128], perr[256];
    sf_props_t *props = NULL;
    const char *v;
    char *end;
    long long id;
    int rc, n;

    snprintf(file, sizeof(file), "%s/%s", ld->path, SF_LOGDIR_META);
    if (access(file, F_OK) < 0) {
        n = snprintf(buf, sizeof(buf), "version=0\nbroker.id=%d\n", (int)broker_id);
        rc = write_atomic(ld->path, SF_LOGDIR_META, buf, (size_t)n);
        if (rc != SF_OK)
            sf_errf(errstr, errstr_size, "cannot write %s: %s", file, strerror(errno));
        return rc;
    }
    rc = sf_props_load(file, &props, perr, sizeof(perr));
    if (rc != SF_OK) {
        sf_errf(errstr, errstr_size, "cannot read %s", perr);
        return rc == SF_ERR_IO ? SF_ERR_IO : SF_ERR_INVALID;
    }
    v = sf_props_get(props, "broker.id");
    errno = 0;
    id = v ? strtoll(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || id < INT32_MIN || id > INT32_MAX) {
        sf_errf(errstr, errstr_size, "%s has no valid broker.id; fix or remove the file", file);
        rc = SF_ERR_INVALID;
    } else if (id != broker_id) {
        sf_errf(errstr, errstr_size,
               "log directory %s belongs to broker.id=%lld (%s) but this broker is "
               "broker.id=%d; use the right log.dirs or broker.id",
               ld->path, id, file, (int)broker_id);
        rc = SF_ERR_INVALID;
    } else {
        rc = SF_OK;
    }
    sf_props_free(props);
    return rc;
}

/* ---- the logs ---- */

sf_log_t *sf_logdir_get(sf_logdir_t *ld, const char *topic, int32_t partition) {
    ld_entry_t *e;
    pthread_mutex_lock(&ld->mu);
    e = *entry_slot(ld, topic, partition);
    pthread_mutex_unlock(&ld->mu);
    return e ? e->log : NULL;
}

int sf_logdir_create(sf_logdir_t *ld, const char *topic, int32_t partition,
                     const sf_log_config_t *cfg, sf_log_t **out) {
    sf_log_t *log;
    int rc;

    if (out)
        *out = NULL;
    if (!sf_znode_topic_name_valid(topic) || partition < 0)
        return SF_ERR_INVALID;
    log = sf_logdir_get(ld, topic, partition);
    if (log) {
        if (out)
            *out = log;
        return SF_OK;
    }
    /* A new partition starts empty; anything already in its directory is recovered. */
    rc = sf_log_open(ld->path, topic, partition, cfg ? cfg : &ld->defaults, 0, &log);
    if (rc != SF_OK)
        return rc;
    /* No fsync on the loop: the flusher flushes the new log (its directory) and then writes
     * the checkpoint, which fsyncs this directory (the new entry) as well. */
    pthread_mutex_lock(&ld->mu);
    rc = table_add(ld, log, 1);
    pthread_mutex_unlock(&ld->mu);
    if (rc != SF_OK) {
        sf_log_close(log);
        return rc;
    }
    if (out)
        *out = log;
    return SF_OK;
}

int sf_logdir_remove(sf_logdir_t *ld, const char *topic, int32_t partition) {
    ld_entry_t **pp, *e;
    int rc;
    pthread_mutex_lock(&ld->mu);
    pp = entry_slot(ld, topic, partition);
    e = *pp;
    if (!e) {
        pthread_mutex_unlock(&ld->mu);
        return SF_ERR_NOTFOUND;
    }
    /* The flusher may be fsyncing this log right now: wait for it (rare and short). */
    while (e->busy)
        pthread_cond_wait(&ld->cond, &ld->mu);
    pp = entry_slot(ld, topic, partition);
    *pp = e->next;
    ld->count--;
    ld->ckpt_dirty = 1;
    pthread_mutex_unlock(&ld->mu);
    rc = sf_log_delete(e->log);
    /* The checkpoint the flusher writes next (ckpt_dirty) fsyncs this directory, making the
     * removal durable off the loop. */
    free(e);
    return rc;
}

size_t sf_logdir_count(const sf_logdir_t *ld) {
    return ld->count;
}

void sf_logdir_foreach(sf_logdir_t *ld, void (*fn)(sf_log_t *log, void *arg), void *arg) {
    size_t i;
    /* Only the loop thread changes the table, and it is the caller: no lock needed around
     * @fn, which may take its time. */
    for (i = 0; i < ld->nbuckets; i++) {
        ld_entry_t *e;
        for (e = ld->buckets[i]; e; e = e->next)
            fn(e->log, arg);
    }
}

typedef struct retention_pass {
    int64_t now_ms, producer_expiration_ms;
} retention_pass_t;

static void retention_one(sf_log_t *log, void *arg) {
    const retention_pass_t *rp = arg;
    int rc = sf_log_retention(log, rp->now_ms);
    if (rc < 0)
        sf_log(SF_LOG_WARNING, "STORAGE", "%s: retention failed: %s", sf_log_path(log),
               sf_err_str(rc));
    (void)sf_log_expire_producers(log, rp->now_ms, rp->producer_expiration_ms);
}

void sf_logdir_retention(sf_logdir_t *ld, int64_t now_ms, int64_t producer_expiration_ms) {
    retention_pass_t rp = {now_ms, producer_expiration_ms};
    sf_logdir_foreach(ld, retention_one, &rp);
}

/* ---- flusher ---- */

static void *flusher_main(void *arg) {
    sf_logdir_t *ld = arg;
    ld_entry_t **todo = NULL;
    size_t cap = 0;

    pthread_mutex_lock(&ld->mu);
    while (!ld->stop) {
        struct timespec deadline;
        int64_t now_ms;
        size_t n = 0, i;
        int flushed = 0, dirty;

        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += ld->interval_ms / 1000;
        deadline.tv_nsec += (ld->interval_ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        while (!ld->stop && pthread_cond_timedwait(&ld->cond, &ld->mu, &deadline) == 0)
            ;
        if (ld->stop)
            break;

        /* Pick the logs due, mark them busy so they are not removed under us. */
        now_ms = sf_clock_wall_ms();
        if (cap < ld->count) {
            ld_entry_t **p = realloc(todo, ld->count * sizeof(*p));
            if (p) {
                todo = p;
                cap = ld->count;
            }
        }
        for (i = 0; i < ld->nbuckets; i++) {
            ld_entry_t *e;
            for (e = ld->buckets[i]; e && n < cap; e = e->next) {
                if (e->created || sf_log_needs_flush(e->log, now_ms)) {
                    /* A failed flush is retried: sf_log_needs_flush says so afterwards. */
                    e->created = 0;
                    e->busy = 1;
                    todo[n++] = e;
                }
            }
        }
        pthread_mutex_unlock(&ld->mu);

        for (i = 0; i < n; i++) {
            int rc = sf_log_flush(todo[i]->log);
            if (rc != SF_OK)
                sf_log(SF_LOG_ERR, "STORAGE", "%s: flush failed: %s", sf_log_path(todo[i]->log),
                       sf_err_str(rc));
            else
                flushed = 1;
        }

        pthread_mutex_lock(&ld->mu);
        for (i = 0; i < n; i++)
            todo[i]->busy = 0;
        if (n > 0)
            pthread_cond_broadcast(&ld->cond);
        dirty = ld->ckpt_dirty;
        pthread_mutex_unlock(&ld->mu);
        if (flushed || dirty) {
            (void)write_checkpoints(ld, 0);
        } else {
            (void)start_ckpt_write(ld); /* DeleteRecords moves start offsets without a flush */
            pthread_mutex_lock(&ld->ckpt_mu);
            (void)hw_ckpt_write(ld, 0);
            pthread_mutex_unlock(&ld->ckpt_mu);
        }
        pthread_mutex_lock(&ld->mu);
    }
    pthread_mutex_unlock(&ld->mu);
    free(todo);
    return NULL;
}

int sf_logdir_start_flusher(sf_logdir_t *ld, int64_t check_interval_ms) {
    if (ld->flusher_running)
        return SF_ERR_STATE;
    ld->interval_ms = check_interval_ms > 0 ? check_interval_ms : 1000;
    ld->stop = 0;
    if (pthread_create(&ld->flusher, NULL, flusher_main, ld) != 0)
        return SF_ERR_IO;
    ld->flusher_running = 1;
    return SF_OK;
}

static void flusher_stop(sf_logdir_t *ld) {
    if (!ld->flusher_running)
        return;
    pthread_mutex_lock(&ld->mu);
    ld->stop = 1;
    pthread_cond_broadcast(&ld->cond);
    pthread_mutex_unlock(&ld->mu);
    pthread_join(ld->flusher, NULL);
    ld->flusher_running = 0;
}

int sf_logdir_close(sf_logdir_t *ld, int clean) {
    size_t i;
    int rc = SF_OK, r;
    if (!ld)
        return SF_OK;
    flusher_stop(ld);
    for (i = 0; i < ld->nbuckets; i++) {
        ld_entry_t *e;
        for (e = ld->buckets[i]; e; e = e->next) {
            r = sf_log_flush(e->log);
            if (r != SF_OK && rc == SF_OK) {
                sf_log(SF_LOG_ERR, "STORAGE", "%s: flush at shutdown failed: %s",
                       sf_log_path(e->log), sf_err_str(r));
                rc = r;
            }
        }
    }
    r = sf_logdir_write_checkpoint(ld);
    if (rc == SF_OK)
        rc = r;
    if (clean && rc == SF_OK) {
        /* Index files are written by sf_log_close; write them first so the marker covers
         * complete segments. */
        close_logs(ld);
        rc = write_atomic(ld->path, SF_LOGDIR_CLEAN_MARKER, "", 0);
    }
    logdir_free(ld);
    return rc;
}
