/* Admin requests waiting for ZooKeeper and for the metadata to show their changes. */
#include "admin_op.h"

#include <stdlib.h>
#include <string.h>

#include "brokercfg.h"
#include "logging.h"

/* Longest an admin request waits for its change to show in the metadata. */
#define ADMIN_MAX_WAIT_MS 30000

sf_admin_op_t *sf_admin_op_new(sf_kreq_t *kr, sf_admin_kind_t kind, int nitems,
                               sf_admin_respond_fn respond) {
    sf_admin_op_t *op = calloc(1, sizeof(*op));
    int i;
    if (!op)
        return NULL;
    op->items = calloc((size_t)nitems + 1, sizeof(*op->items));
    if (!op->items) {
        free(op);
        return NULL;
    }
    op->kr = kr;
    op->kind = kind;
    op->nitems = nitems;
    op->respond = respond;
    op->wait_visible = 1;
    for (i = 0; i < nitems; i++)
        op->items[i].op = op;
    return op;
}

void sf_admin_op_free(sf_admin_op_t *op) {
    int i;
    for (i = 0; i < op->nitems; i++) {
        free(op->items[i].topic);
        sf_cluster_configs_free(op->items[i].configs, op->items[i].nconfigs);
    }
    free(op->items);
    free(op);
}

int sf_admin_fail(sf_admin_item_t *it, int16_t err, const char *msg) {
    if (it->error == SF_KERR_NONE) {
        it->error = err;
        it->message = msg;
    }
    return 0;
}

/* 1 when @cfgs (@n entries, sorted) are exactly the set @it wrote. */
static int configs_shown(const sf_cluster_config_entry_t *cfgs, int n,
                         const sf_admin_item_t *it) {
    int i;
    if (n != it->nconfigs)
        return 0;
    for (i = 0; i < it->nconfigs; i++) {
        const char *v = sf_cluster_configs_find(cfgs, n, it->configs[i].name);
        if (!v || strcmp(v, it->configs[i].value))
            return 0;
    }
    return 1;
}

/* 1 when the request's snapshot shows the config set @it wrote. */
static int item_configs_shown(const sf_kreq_t *kr, const sf_admin_item_t *it) {
    const sf_cluster_snapshot_t *snap = kr->snap;
    const sf_cluster_topic_t *t;
    switch (it->target) {
    case SF_ADMIN_TARGET_BROKER:
        return snap && configs_shown(snap->broker_configs, snap->nbroker_configs, it);
    case SF_ADMIN_TARGET_DEFAULT:
        return snap && configs_shown(snap->default_configs, snap->ndefault_configs, it);
    default:
        /* A topic deleted meanwhile has nothing to show. */
        t = sf_kreq_topic(kr, it->topic);
        return !t || configs_shown(t->configs, t->nconfigs, it);
    }
}

/* Every partition has a leader (the controller elected it), and those led here have their
 * log open (so a client that produces right after the answer is not refused). */
static int leaders_ready(const sf_kreq_t *kr, const sf_cluster_topic_t *t) {
    int32_t me = sf_broker_cfg(kr->b)->broker_id;
    int p;
    for (p = 0; p < t->npartitions; p++) {
        const sf_cluster_partition_t *part = &t->partitions[p];
        if (!sf_cluster_partition_has_state(part) ||
            (part->leader == me && !sf_view_partition(kr->view, t->name, p)))
            return 0;
    }
    return 1;
}

/* 1 when every successful item's change is visible in the request's snapshot. */
static int visible(sf_admin_op_t *op) {
    int i;
    if (op->validate_only || !op->wait_visible)
        return 1;
    sf_kreq_refresh(op->kr);
    for (i = 0; i < op->nitems; i++) {
        const sf_admin_item_t *it = &op->items[i];
        const sf_cluster_topic_t *t;
        if (it->error != SF_KERR_NONE)
            continue;
        if (op->kind == SF_ADMIN_CONFIGS) {
            if (!item_configs_shown(op->kr, it))
                return 0;
            continue;
        }
        t = sf_kreq_topic(op->kr, it->topic);
        switch (op->kind) {
        case SF_ADMIN_DELETE:
            if (t)
                return 0;
            break;
        default:
            if (!t || t->npartitions < it->partitions || !leaders_ready(op->kr, t))
                return 0;
        }
    }
    return 1;
}

static void answer(sf_admin_op_t *op) {
    op->respond(op);
    op->kr = NULL; /* the request and its arena are gone */
}

/* Answer @op if its writes are done and visible (or @final); free it once answered and no
 * ZooKeeper completion refers to it. Returns 1 if answered. */
static int check(sf_admin_op_t *op, int final) {
    int i, answered = 0;
    if (op->kr && ((op->zk_pending == 0 && visible(op)) || final)) {
        for (i = 0; final && i < op->nitems; i++)
            if (op->items[i].zk_pending)
                op->items[i].error = SF_KERR_REQUEST_TIMED_OUT;
        answer(op);
        answered = 1;
    }
    if (!op->kr && op->zk_pending == 0)
        sf_admin_op_free(op);
    return answered;
}

static int attempt(void *arg, int final) {
    sf_admin_op_t *op = arg;
    sf_pwait_t *w = op->wait;
    op->wait = NULL; /* an answered op may be freed inside check */
    if (check(op, final))
        return 1;
    op->wait = w; /* still parked */
    return 0;
}

void sf_admin_started(sf_admin_item_t *it, int rc) {
    if (rc == SF_OK) {
        it->zk_pending = 1;
        it->op->zk_pending++;
    } else {
        sf_admin_fail(it, sf_err_to_kerr(rc, it->op->kind == SF_ADMIN_PARTITIONS ? SF_ERR_OP_PARTITIONS
                                             : it->op->kind == SF_ADMIN_CONFIGS  ? SF_ERR_OP_CONFIG
                                                                                 : SF_ERR_OP_TOPIC),
                      NULL);
    }
}

void sf_admin_done(void *arg, int err) {
    sf_admin_item_t *it = arg;
    sf_admin_op_t *op = it->op;
    it->zk_pending = 0;
    op->zk_pending--;
    if (err != SF_OK && op->kr) {
        sf_admin_started(it, err);
        if (err == SF_ERR_IO)
            it->message = "the ZooKeeper write failed";
    }
    if (!op->kr) {
        if (op->zk_pending == 0)
            sf_admin_op_free(op);
        return;
    }
    /* Answered here when the metadata already shows it; else a later snapshot (or the
     * timeout) completes the parked wait. */
    if (op->zk_pending == 0 && visible(op)) {
        if (op->wait)
            sf_purgatory_cancel(sf_broker_purgatory(op->kr->b), op->wait);
        op->wait = NULL;
        check(op, 0);
    }
}

void sf_admin_run(sf_admin_op_t *op, int32_t timeout_ms) {
    sf_pkey_t key = sf_pkey_metadata();
    if (timeout_ms <= 0)
        op->wait_visible = 0;
    if (timeout_ms <= 0 || timeout_ms > ADMIN_MAX_WAIT_MS)
        timeout_ms = ADMIN_MAX_WAIT_MS;
    if (check(op, 0))
        return;
    op->wait = sf_kreq_park(op->kr, &key, 1, timeout_ms, attempt, op);
    if (!op->wait)
        check(op, 1);
}

char *sf_admin_name_dup(sf_slice_t s) {
    char *r;
    if (s.len < 0 || !(r = malloc((size_t)s.len + 1)))
        return NULL;
    if (s.len)
        memcpy(r, s.p, (size_t)s.len);
    sf_kreq_nul_mark(r, (size_t)s.len);
    return r;
}

static int key_cmp(const void *a, const void *b) {
    const sf_admin_key_t *x = a, *y = b;
    int32_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
    int c = n > 0 ? memcmp(x->name.p, y->name.p, (size_t)n) : 0;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    if (c)
        return c;
    if (x->name.len != y->name.len)
        return x->name.len < y->name.len ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int sf_admin_find_dups(sf_admin_key_t *keys, int n, char *dup) {
    int i, first = -1;
    if (n > 1)
        qsort(keys, (size_t)n, sizeof(*keys), key_cmp);
    for (i = 1; i < n; i++) {
        const sf_admin_key_t *x = &keys[i - 1], *y = &keys[i];
        if (y->name.len < 0 || x->tag != y->tag || x->name.len != y->name.len ||
            (y->name.len && memcmp(x->name.p, y->name.p, (size_t)y->name.len)))
            continue;
        if (dup)
            dup[x->idx] = dup[y->idx] = 1;
        if (first < 0 || y->idx < first)
            first = y->idx;
    }
    return first;
}
