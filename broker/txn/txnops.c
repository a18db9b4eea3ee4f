/* The transaction coordinator's requests (txn.h): InitProducerId, AddPartitionsToTxn,
 * AddOffsetsToTxn, EndTxn, and describing. Each checks the producer id and epoch against the
 * id's state and moves it on with one write (txn_write), as Kafka's TransactionCoordinator
 * does; a request arriving while a write or the markers are under way gets
 * CONCURRENT_TRANSACTIONS, which clients retry. */
#include "txn_int.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "err.h"
#include "logging.h"

/* The topic that stands for the groups' offsets in a transaction (Kafka's). */
#define OFFSETS_TOPIC "__consumer_offsets"

static int busy(const sf_txn_t *t) {
    return t->writing || t->marking;
}

static int16_t check_producer(const sf_txn_t *t, int64_t pid, int16_t epoch, int16_t fenced) {
    if (t->m.producer_id < 0 || t->m.producer_id != pid)
        return SF_KERR_INVALID_PRODUCER_ID_MAPPING;
    if (t->m.epoch != epoch)
        return fenced;
    return SF_KERR_NONE;
}

/* ---- fencing ---- */

static void fenced_cb(void *arg, sf_txn_t *t, int16_t err) {
    (void)arg;
    if (err == SF_KERR_NONE)
        txn_markers_start(t);
}

void txn_fence_and_abort(sf_txn_t *t, const char *why) {
    txn_meta_t next;
    if (busy(t) || txn_meta_copy(&next, &t->m) != SF_OK)
        return;
    if (next.epoch < INT16_MAX) { /* past it the markers still abort, at the same epoch */
        next.last_producer_id = next.producer_id;
        next.last_epoch = next.epoch;
        next.epoch++;
    }
    next.state = TS_PREPARE_ABORT;
    sf_log(SF_LOG_INFO, "TXN", "transactional id %s: aborting the ongoing transaction (%s)",
           t->id, why);
    txn_write(t, &next, fenced_cb, NULL);
}

/* ---- InitProducerId ---- */

typedef struct init_op {
    int32_t timeout_ms;
    int64_t pid;
    int16_t epoch, fenced;
    sf_txn_init_cb cb;
    void *arg;
    sf_txn_t *t;
    txn_meta_t next; /* waiting for a new producer id */
} init_op_t;

static void init_answer(init_op_t *op, int16_t err, int64_t pid, int16_t epoch) {
    op->cb(op->arg, err, err ? -1 : pid, err ? -1 : epoch);
    txn_meta_free(&op->next);
    free(op);
}

static void init_written(void *arg, sf_txn_t *t, int16_t err) {
    init_op_t *op = arg;
    init_answer(op, err, t->m.producer_id, t->m.epoch);
}

static void init_got_pid(void *arg, int err, int64_t id) {
    init_op_t *op = arg;
    sf_txn_t *t = op->t;
    t->writing = 0;
    if (err != SF_OK || t->dropped) {
        init_answer(op, t->dropped ? SF_KERR_NOT_COORDINATOR : SF_KERR_COORDINATOR_NOT_AVAILABLE,
                    -1, -1);
    } else {
        /* A new id (a new transactional id, or the epochs of the old one ran out). */
        if (op->next.producer_id >= 0 && op->pid >= 0) {
            op->next.last_producer_id = op->next.producer_id;
            op->next.last_epoch = op->next.epoch;
        }
        op->next.producer_id = id;
        op->next.epoch = 0;
        txn_write(t, &op->next, init_written, op);
    }
    txn_release(t);
}

static void init_loaded(void *arg, sf_txn_t *t, int16_t err) {
    init_op_t *op = arg;
    const txn_meta_t *m;
    if (err) {
        init_answer(op, err, -1, -1);
        return;
    }
    m = &t->m;
    if (busy(t) || m->state == TS_PREPARE_COMMIT || m->state == TS_PREPARE_ABORT ||
        m->state == TS_PREPARE_EPOCH_FENCE) {
        init_answer(op, SF_KERR_CONCURRENT_TRANSACTIONS, -1, -1);
        return;
    }
    if (m->producer_id >= 0 && op->pid >= 0) {
        /* KIP-360: the client names the id and epoch it had. A retry of the bump that went
         * through gets the current ones; any other stranger is fenced. */
        if (op->pid == m->last_producer_id && op->epoch == m->last_epoch &&
            m->state == TS_EMPTY) {
            init_answer(op, SF_KERR_NONE, m->producer_id, m->epoch);
            return;
        }
        if (op->pid != m->producer_id || op->epoch != m->epoch) {
            init_answer(op, op->fenced, -1, -1);
            return;
        }
    }
    if (m->state == TS_ONGOING) {
        txn_fence_and_abort(t, "a producer initialised the transactional id again");
        init_answer(op, SF_KERR_CONCURRENT_TRANSACTIONS, -1, -1);
        return;
    }
    if (txn_meta_copy(&op->next, m) != SF_OK) {
        init_answer(op, SF_KERR_COORDINATOR_NOT_AVAILABLE, -1, -1);
        return;
    }
    op->next.timeout_ms = op->timeout_ms;
    op->next.state = TS_EMPTY;
    op->next.start_ms = -1;
    txn_meta_clear_parts(&op->next);
    /* A retry is recognised only from a producer that named itself (Kafka's lastProducerEpoch):
     * a fenced instance must not pass for a retry of its successor's bump. */
    op->next.last_producer_id = op->pid >= 0 ? m->producer_id : -1;
    op->next.last_epoch = op->pid >= 0 ? m->epoch : -1;
    if (m->producer_id >= 0 && m->epoch < INT16_MAX - 1) {
        op->next.epoch++;
        txn_write(t, &op->next, init_written, op);
        return;
    }
    op->t = t;
    t->writing = 1; /* nothing else until the id is there */
    t->busy++;
    txn_new_producer_id(t->c, init_got_pid, op);
}

void sf_txn_init_producer(sf_txn_coord_t *c, const char *id, int32_t timeout_ms,
                          int64_t producer_id, int16_t epoch, int16_t fenced_error,
                          sf_txn_init_cb cb, void *arg) {
    init_op_t *op;
    if (timeout_ms <= 0 || timeout_ms > c->cfg.max_timeout_ms) {
        cb(arg, SF_KERR_INVALID_TRANSACTION_TIMEOUT, -1, -1);
        return;
    }
    if (!(op = calloc(1, sizeof(*op)))) {
        cb(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, -1, -1);
        return;
    }
    op->timeout_ms = timeout_ms;
    op->pid = producer_id;
    op->epoch = epoch;
    op->fenced = fenced_error;
    op->cb = cb;
    op->arg = arg;
    txn_meta_init(&op->next);
    txn_with(c, id, init_loaded, op);
}

/* ---- AddPartitionsToTxn, AddOffsetsToTxn ---- */

typedef struct add_op {
    int64_t pid;
    int16_t epoch, fenced;
    const sf_txn_tp_t *parts; /* borrowed until the answer */
    sf_txn_tp_t offsets_part; /* AddOffsetsToTxn's */
    int n, verify_only;
    sf_txn_add_cb cb;
    void *arg;
    int16_t errs[];
} add_op_t;

static void add_answer(add_op_t *op, int16_t err) {
    int i;
    if (err == SF_KERR_NONE) {
        op->cb(op->arg, SF_KERR_NONE, op->errs);
    } else {
        for (i = 0; i < op->n; i++)
            op->errs[i] = err;
        op->cb(op->arg, err, op->errs);
    }
    free(op);
}

static void add_written(void *arg, sf_txn_t *t, int16_t err) {
    (void)t;
    add_answer(arg, err);
}

static void add_loaded(void *arg, sf_txn_t *t, int16_t err) {
    add_op_t *op = arg;
    txn_meta_t next;
    int i, missing = 0;
    if (!err)
        err = check_producer(t, op->pid, op->epoch, op->fenced);
    if (!err && (busy(t) || t->m.state == TS_PREPARE_COMMIT || t->m.state == TS_PREPARE_ABORT))
        err = SF_KERR_CONCURRENT_TRANSACTIONS;
    if (err) {
        add_answer(op, err);
        return;
    }
    for (i = 0; i < op->n; i++) {
        /* A finished transaction keeps its partitions until the next begins: only an ongoing
         * one holds them for a verification. */
        int in = txn_meta_find(&t->m, op->parts[i].topic, op->parts[i].partition) >= 0 &&
                 (t->m.state == TS_ONGOING || !op->verify_only);
        op->errs[i] = in || !op->verify_only ? SF_KERR_NONE : SF_KERR_INVALID_TXN_STATE;
        missing |= !in;
    }
    if (op->verify_only || (!missing && t->m.state == TS_ONGOING)) {
        add_answer(op, SF_KERR_NONE);
        return;
    }
    if (txn_meta_copy(&next, &t->m) != SF_OK) {
        add_answer(op, SF_KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (next.state != TS_ONGOING) {
        txn_meta_clear_parts(&next);
        next.start_ms = sf_clock_wall_ms();
        next.state = TS_ONGOING;
    }
    for (i = 0; i < op->n; i++)
        if (txn_meta_add(&next, op->parts[i].topic, op->parts[i].partition) != SF_OK) {
            txn_meta_free(&next);
            add_answer(op, SF_KERR_COORDINATOR_NOT_AVAILABLE);
            return;
        }
    txn_write(t, &next, add_written, op);
}

static add_op_t *add_op_new(int64_t pid, int16_t epoch, int n, int16_t fenced,
                            sf_txn_add_cb cb, void *arg) {
    add_op_t *op = calloc(1, sizeof(*op) + (size_t)(n + 1) * sizeof(int16_t));
    if (!op)
        return NULL;
    op->pid = pid;
    op->epoch = epoch;
    op->fenced = fenced;
    op->n = n;
    op->cb = cb;
    op->arg = arg;
    return op;
}

void sf_txn_add_partitions(sf_txn_coord_t *c, const char *id, int64_t producer_id,
                           int16_t epoch, const sf_txn_tp_t *parts, int n, int verify_only,
                           int16_t fenced_error, sf_txn_add_cb cb, void *arg) {
    add_op_t *op = add_op_new(producer_id, epoch, n, fenced_error, cb, arg);
    if (!op) {
        cb(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        return;
    }
    op->parts = parts;
    op->verify_only = verify_only;
    txn_with(c, id, add_loaded, op);
}

void sf_txn_add_offsets(sf_txn_coord_t *c, const char *id, int64_t producer_id, int16_t epoch,
                        const char *group, int16_t fenced_error, sf_txn_add_cb cb, void *arg) {
    add_op_t *op;
    if (!group || !*group) {
        cb(arg, SF_KERR_INVALID_GROUP_ID, NULL);
        return;
    }
    if (c->nbuckets < 1 || !(op = add_op_new(producer_id, epoch, 1, fenced_error, cb, arg))) {
        cb(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        return;
    }
    op->offsets_part.topic = OFFSETS_TOPIC;
    op->offsets_part.partition = sf_txn_bucket_of(group, c->nbuckets);
    op->parts = &op->offsets_part;
    txn_with(c, id, add_loaded, op);
}

/* ---- EndTxn ---- */

typedef struct end_op {
    int64_t pid;
    int16_t epoch, fenced;
    int commit;
    sf_txn_init_cb cb;
    void *arg;
} end_op_t;

static void end_answer(end_op_t *op, int16_t err, const sf_txn_t *t) {
    op->cb(op->arg, err, t && !err ? t->m.producer_id : -1, t && !err ? t->m.epoch : -1);
    free(op);
}

static void end_written(void *arg, sf_txn_t *t, int16_t err) {
    end_answer(arg, err, t);
    if (err == SF_KERR_NONE)
        txn_markers_start(t);
}

/* What EndTxn gets in a state other than Ongoing (Kafka's answers: a retry of the same end
 * succeeds, or waits for the markers; anything else is out of order). */
static int16_t end_refusal(int state, int commit) {
    switch (state) {
    case TS_COMPLETE_COMMIT:
        return commit ? SF_KERR_NONE : SF_KERR_INVALID_TXN_STATE;
    case TS_COMPLETE_ABORT:
        return commit ? SF_KERR_INVALID_TXN_STATE : SF_KERR_NONE;
    case TS_PREPARE_COMMIT:
        return commit ? SF_KERR_CONCURRENT_TRANSACTIONS : SF_KERR_INVALID_TXN_STATE;
    case TS_PREPARE_ABORT:
        return commit ? SF_KERR_INVALID_TXN_STATE : SF_KERR_CONCURRENT_TRANSACTIONS;
    default:
        return SF_KERR_INVALID_TXN_STATE;
    }
}

static void end_loaded(void *arg, sf_txn_t *t, int16_t err) {
    end_op_t *op = arg;
    txn_meta_t next;
    if (!err)
        err = check_producer(t, op->pid, op->epoch, op->fenced);
    if (!err && busy(t))
        err = SF_KERR_CONCURRENT_TRANSACTIONS;
    if (!err && t->m.state != TS_ONGOING)
        err = end_refusal(t->m.state, op->commit);
    if (err || t->m.state != TS_ONGOING) {
        end_answer(op, err, t);
        return;
    }
    if (txn_meta_copy(&next, &t->m) != SF_OK) {
        end_answer(op, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        return;
    }
    next.state = op->commit ? TS_PREPARE_COMMIT : TS_PREPARE_ABORT;
    txn_write(t, &next, end_written, op);
}

void sf_txn_end(sf_txn_coord_t *c, const char *id, int64_t producer_id, int16_t epoch,
                int commit, int16_t fenced_error, sf_txn_init_cb cb, void *arg) {
    end_op_t *op = calloc(1, sizeof(*op));
    if (!op) {
        cb(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, -1, -1);
        return;
    }
    op->pid = producer_id;
    op->epoch = epoch;
    op->fenced = fenced_error;
    op->commit = commit;
    op->cb = cb;
    op->arg = arg;
    txn_with(c, id, end_loaded, op);
}

/* ---- describing ---- */

static int describe(const sf_txn_t *t, sf_txn_description_t *d, sf_txn_tp_t **tps) {
    int i;
    memset(d, 0, sizeof(*d));
    *tps = NULL;
    if (t->m.nparts && !(*tps = calloc((size_t)t->m.nparts, sizeof(**tps))))
        return SF_ERR_NOMEM;
    for (i = 0; i < t->m.nparts; i++) {
        (*tps)[i].topic = t->m.parts[i].topic;
        (*tps)[i].partition = t->m.parts[i].partition;
    }
    d->id = t->id;
    d->state = txn_state_name(t->m.state);
    d->producer_id = t->m.producer_id;
    d->producer_epoch = t->m.epoch;
    d->timeout_ms = t->m.timeout_ms;
    d->start_ms = t->m.start_ms;
    d->parts = *tps;
    d->nparts = t->m.nparts;
    return SF_OK;
}

typedef struct desc_op {
    sf_txn_describe_cb cb;
    void *arg;
} desc_op_t;

static void desc_loaded(void *arg, sf_txn_t *t, int16_t err) {
    desc_op_t *op = arg;
    sf_txn_description_t d;
    sf_txn_tp_t *tps = NULL;
    if (!err && t->m.producer_id < 0)
        err = SF_KERR_TRANSACTIONAL_ID_NOT_FOUND;
    if (!err && describe(t, &d, &tps) != SF_OK)
        err = SF_KERR_COORDINATOR_NOT_AVAILABLE;
    op->cb(op->arg, err, err ? NULL : &d);
    free(tps);
    free(op);
}

void sf_txn_describe(sf_txn_coord_t *c, const char *id, sf_txn_describe_cb cb, void *arg) {
    desc_op_t *op = calloc(1, sizeof(*op));
    if (!op) {
        cb(arg, SF_KERR_COORDINATOR_NOT_AVAILABLE, NULL);
        return;
    }
    op->cb = cb;
    op->arg = arg;
    txn_with(c, id, desc_loaded, op);
}

static int listed(const sf_txn_t *t, const char *const *states, int nstates,
                  const int64_t *pids, int npids, int64_t min_duration_ms, int64_t now) {
    int i, state_ok = !nstates, pid_ok = !npids;
    if (!t->loaded || t->m.producer_id < 0)
        return 0;
    for (i = 0; !state_ok && i < nstates; i++)
        state_ok = !strcmp(states[i], txn_state_name(t->m.state));
    for (i = 0; !pid_ok && i < npids; i++)
        pid_ok = pids[i] == t->m.producer_id;
    return state_ok && pid_ok &&
           (min_duration_ms < 0 || (t->m.start_ms >= 0 && now - t->m.start_ms >= min_duration_ms));
}

void sf_txn_list(sf_txn_coord_t *c, const char *const *states, int nstates,
                 const int64_t *pids, int npids, int64_t min_duration_ms, int64_t now_ms,
                 void (*fn)(void *arg, const sf_txn_description_t *d), void *arg) {
    size_t s;
    for (s = 0; s < c->ntable; s++) {
        const sf_txn_t *t;
        for (t = c->table[s]; t; t = t->hnext) {
            sf_txn_description_t d;
            sf_txn_tp_t *tps;
            if (!listed(t, states, nstates, pids, npids, min_duration_ms, now_ms) ||
                describe(t, &d, &tps) != SF_OK)
                continue;
            fn(arg, &d);
            free(tps);
        }
    }
}
