/* ControlledShutdown (on the controller): a broker about to stop asks the controller to move
 * leadership of its partitions to other in-sync replicas first. As Kafka's controller does:
 * each partition it leads (with more than one replica) goes to the first live ISR member in
 * assignment order that is not the requester, and it leaves the ISR of each partition it
 * follows; leader epoch + 1 with each change (election_rules.h), all written in one batch of
 * fenced, versioned multi-ops. The answer names the partitions it still leads (no other ISR
 * member, or the write lost a race): the broker asks again until none is left. The group
 * coordinator buckets it holds move to the other brokers too. */
#include "dispatch.h"

#include <stdlib.h>
#include <string.h>

#include "election_rules.h"
#include "logging.h"

#define CS_MAX_WAIT_MS 30000

typedef struct cs_stuck {
    char *topic;
    int32_t partition;
} cs_stuck_t;

/* On the heap: the write may complete after the request was answered (timeout, shutdown). */
typedef struct cs_op {
    sf_kreq_t *kr; /* NULL once answered */
    int32_t broker;
    sf_cluster_state_write_t *w; /* the changes (topics and ISRs owned) */
    char *moves;                 /* per change: 1 if it moves the requester's leadership */
    int n, cap, capmoves;
    cs_stuck_t *stuck;           /* led partitions no one can take over */
    int nstuck, capstuck;
    int zk_pending;
    sf_pwait_t *wait;
} cs_op_t;

static void op_free(cs_op_t *op) {
    int i;
    for (i = 0; i < op->n; i++) {
        free((char *)op->w[i].topic);
        free(op->w[i].st.isr);
    }
    for (i = 0; i < op->nstuck; i++)
        free(op->stuck[i].topic);
    free(op->w);
    free(op->moves);
    free(op->stuck);
    free(op);
}

/* Answer with @err, or with the partitions it still leads. */
static void answer(cs_op_t *op, sf_kerr_t err, int timed_out) {
    sf_kreq_t *kr = op->kr;
    sf_proto_ControlledShutdownResponse_t resp;
    int i, m = 0;
    sf_proto_ControlledShutdownResponse_init(&resp);
    resp.ErrorCode = err;
    if (err == SF_KERR_NONE) {
        resp.RemainingPartitions = sf_kreq_alloc(kr, (size_t)(op->nstuck + op->n),
                                                 sizeof(*resp.RemainingPartitions));
        if (!resp.RemainingPartitions) {
            sf_kreq_close(kr, "no memory for the response");
            op->kr = NULL;
            return;
        }
        for (i = 0; i < op->nstuck; i++) {
            resp.RemainingPartitions[m].TopicName = sf_kreq_slice(kr, op->stuck[i].topic);
            resp.RemainingPartitions[m++].PartitionIndex = op->stuck[i].partition;
        }
        for (i = 0; i < op->n; i++) {
            if (!op->moves[i] || (!timed_out && op->w[i].err == SF_OK))
                continue;
            resp.RemainingPartitions[m].TopicName = sf_kreq_slice(kr, op->w[i].topic);
            resp.RemainingPartitions[m++].PartitionIndex = op->w[i].st.partition;
        }
        resp.RemainingPartitionsCount = m;
    }
    sf_kreq_respond(kr, &resp);
    op->kr = NULL;
}

static void write_done(void *arg, int err) {
    cs_op_t *op = arg;
    op->zk_pending = 0;
    if (op->kr) {
        if (op->wait)
            sf_purgatory_cancel(sf_broker_purgatory(op->kr->b), op->wait);
        op->wait = NULL;
        answer(op, err == SF_ERR_STATE ? SF_KERR_NOT_CONTROLLER : SF_KERR_NONE, 0);
    }
    op_free(op);
}

static int attempt(void *arg, int final) {
    cs_op_t *op = arg;
    if (!final)
        return 0;
    op->wait = NULL;
    answer(op, SF_KERR_NONE, 1); /* every move still pending counts as remaining */
    if (!op->zk_pending)
        op_free(op);
    return 1;
}

static int grow(void **v, int *cap, int n, size_t size) {
    void *p;
    if (n < *cap)
        return SF_OK;
    if (!(p = realloc(*v, (size_t)(*cap ? 2 * *cap : 16) * size)))
        return SF_ERR_NOMEM;
    *v = p;
    *cap = *cap ? 2 * *cap : 16;
    return SF_OK;
}

static int shutting_down(void *cl, int32_t id) {
    return sf_cluster_broker_shutting_down(cl, id);
}

/* What shutting down the requester changes for @part of @t: a new leader that is not shutting
 * down too, while there is one (two brokers stopping at once). */
static int plan_one(cs_op_t *op, const sf_cluster_snapshot_t *snap, const sf_cluster_topic_t *t,
                    const sf_cluster_partition_t *part) {
    sf_cluster_partition_t out = {0};
    char *topic;
    int rc;
    if (part->nreplicas < 2) /* nowhere to go; Kafka leaves it out of the answer too */
        return SF_OK;
    if ((rc = sf_elect_shutdown(part, snap, op->broker, &out)) < 0)
        return SF_ERR_NOMEM;
    if (rc == SF_ELECT_LEADER)
        sf_elect_avoid_shutting_down(part, shutting_down, sf_broker_cluster(op->kr->b), &out);
    if (rc == SF_ELECT_NONE) {
        if (part->leader != op->broker)
            return SF_OK;
        if (grow((void **)&op->stuck, &op->capstuck, op->nstuck, sizeof(*op->stuck)) ||
            !(op->stuck[op->nstuck].topic = strdup(t->name)))
            return SF_ERR_NOMEM;
        op->stuck[op->nstuck++].partition = part->partition;
        return SF_OK;
    }
    if (grow((void **)&op->w, &op->cap, op->n, sizeof(*op->w)) ||
        grow((void **)&op->moves, &op->capmoves, op->n, 1) || !(topic = strdup(t->name))) {
        free(out.isr);
        return SF_ERR_NOMEM;
    }
    out.partition = part->partition;
    memset(&op->w[op->n], 0, sizeof(op->w[op->n]));
    op->w[op->n].topic = topic;
    op->w[op->n].st = out;
    op->w[op->n].version = part->state_version;
    op->moves[op->n++] = rc == SF_ELECT_LEADER;
    return SF_OK;
}

static int plan(cs_op_t *op, const sf_cluster_snapshot_t *snap) {
    int i, p, moving = 0;
    for (i = 0; i < snap->ntopics; i++) {
        const sf_cluster_topic_t *t = snap->topics[i];
        if (sf_cluster_snapshot_deleting(snap, t->name))
            continue;
        for (p = 0; p < t->npartitions; p++)
            if (plan_one(op, snap, t, &t->partitions[p]) != SF_OK)
                return SF_ERR_NOMEM;
    }
    for (i = 0; i < op->n; i++)
        moving += op->moves[i];
    sf_log(SF_LOG_INFO, "CONTROLLER", "controlled shutdown of broker %d: moving leadership of %d "
           "partition(s), leaving the ISR of %d, %d stay led by it", (int)op->broker, moving,
           op->n - moving, op->nstuck);
    return SF_OK;
}

static sf_kerr_t request_error(sf_kreq_t *kr, sf_cluster_t *cl, const sf_cluster_snapshot_t *snap,
                               const sf_proto_ControlledShutdownRequest_t *req) {
    const sf_cluster_broker_t *b;
    if (!cl || !snap || !sf_cluster_is_controller(cl))
        return SF_KERR_NOT_CONTROLLER;
    if (!(b = sf_cluster_snapshot_broker(snap, req->BrokerId)))
        return SF_KERR_BROKER_NOT_AVAILABLE;
    if (kr->version >= 2 && req->BrokerEpoch >= 0 && req->BrokerEpoch != b->epoch)
        return SF_KERR_STALE_BROKER_EPOCH;
    return SF_KERR_NONE;
}

void sf_kapi_ControlledShutdown(sf_kreq_t *kr, void *msg) {
    const sf_proto_ControlledShutdownRequest_t *req = msg;
    sf_cluster_t *cl = sf_broker_cluster(kr->b);
    const sf_cluster_snapshot_t *snap = cl ? sf_cluster_current(cl) : NULL;
    sf_pkey_t key = sf_pkey_metadata();
    cs_op_t *op = calloc(1, sizeof(*op));
    sf_kerr_t err;
    if (!op) {
        sf_kreq_close(kr, "no memory for the request");
        return;
    }
    op->kr = kr;
    op->broker = req->BrokerId;
    if ((err = request_error(kr, cl, snap, req)) == SF_KERR_NONE)
        sf_cluster_coordinators_evacuate(cl, req->BrokerId);
    if (err != SF_KERR_NONE || plan(op, snap) != SF_OK) {
        if (err == SF_KERR_NONE)
            err = SF_KERR_UNKNOWN_SERVER_ERROR;
        answer(op, err, 0);
        op_free(op);
        return;
    }
    if (!op->n || sf_cluster_alter_isr(cl, op->w, op->n, write_done, op) != SF_OK) {
        /* Nothing to write, or it cannot be written now: the moves count as remaining. */
        answer(op, SF_KERR_NONE, op->n > 0);
        op_free(op);
        return;
    }
    op->zk_pending = 1;
    op->wait = sf_kreq_park(kr, &key, 1, CS_MAX_WAIT_MS, attempt, op);
}
