/* The leader's side of replication (see leader.h). */
#include "config.h"

#include "leader.h"

#include "log.h"

static int isr_has(const sf_cluster_partition_t *cp, int32_t id) {
    int i;
    for (i = 0; i < cp->nisr; i++)
        if (cp->isr[i] == id)
            return 1;
    return 0;
}

static sf_follower_t *follower_find(sf_partition_t *part, int32_t id) {
    int i;
    for (i = 0; i < SF_PARTITION_MAX_FOLLOWERS; i++)
        if (atomic_load_explicit(&part->followers[i].id, memory_order_acquire) == id)
            return &part->followers[i];
    return NULL;
}

/* Set up slot @f for follower @id: caught up as of now, its position not known yet. */
static void follower_init(sf_follower_t *f, int32_t id, int32_t epoch, int64_t now_ms) {
    atomic_store(&f->id, -1); /* no fetch updates the slot while it is set up */
    atomic_store(&f->epoch, epoch);
    atomic_store(&f->leo, -1);
    atomic_store(&f->caught_up_ms, now_ms);
    atomic_store(&f->prev_leader_leo, -1);
    atomic_store(&f->prev_fetch_ms, now_ms);
    atomic_store(&f->pending, 0);
    atomic_store_explicit(&f->id, id, memory_order_release);
}

void sf_leader_apply(sf_partition_t *part, const sf_cluster_partition_t *cp, int32_t self,
                     int64_t now_ms) {
    sf_follower_t *f;
    int i, n = 0;
    if (!sf_leader_replicated(cp) || cp->leader != self) {
        atomic_store(&part->lead_epoch, -1);
        return;
    }
    if (atomic_load(&part->lead_epoch) == cp->leader_epoch) {
        /* An addition the ISR now shows is no longer pending. */
        for (i = 0; i < SF_PARTITION_MAX_FOLLOWERS; i++)
            if (atomic_load(&part->followers[i].pending) &&
                isr_has(cp, atomic_load(&part->followers[i].id)))
                atomic_store(&part->followers[i].pending, 0);
        /* Replicas added by a reassignment (same epoch) get a free slot. */
        for (i = 0; i < cp->nreplicas; i++)
            if (cp->replicas[i] != self && !follower_find(part, cp->replicas[i]) &&
                (f = follower_find(part, -1)))
                follower_init(f, cp->replicas[i], cp->leader_epoch, now_ms);
        return;
    }
    for (i = 0; i < cp->nreplicas && n < SF_PARTITION_MAX_FOLLOWERS; i++) {
        if (cp->replicas[i] == self)
            continue;
        follower_init(&part->followers[n++], cp->replicas[i], cp->leader_epoch, now_ms);
    }
    for (; n < SF_PARTITION_MAX_FOLLOWERS; n++)
        atomic_store(&part->followers[n].id, -1);
    atomic_store(&part->lead_start_offset, sf_log_end_offset(part->log));
    atomic_store(&part->lead_epoch, cp->leader_epoch);
    /* After a restart the high watermark is the checkpointed one, or else unknown: nothing
     * is visible until the ISR reports what it has (a follower that becomes leader knows it
     * from its fetches). */
    if (!atomic_exchange(&part->hw_known, 1)) {
        int64_t hw = sf_log_checkpointed_high_watermark(part->log);
        sf_log_set_high_watermark(part->log, hw >= 0 ? hw : sf_log_start_offset(part->log));
    }
}

int sf_leader_follower_fetched(sf_partition_t *part, int32_t replica, int32_t epoch,
                               int64_t offset, int64_t now_ms) {
    sf_follower_t *f = follower_find(part, replica);
    int64_t leader_leo, prev;
    if (!f || atomic_load(&f->epoch) != epoch || atomic_load(&part->lead_epoch) != epoch)
        return -1;
    leader_leo = sf_log_end_offset(part->log);
    atomic_store(&f->leo, offset);
    /* Kafka's rule: caught up now if it asked for the leader's end, or as of its previous
     * fetch if it asked for at least what the leader had then. */
    prev = atomic_load(&f->prev_leader_leo);
    if (offset >= leader_leo)
        atomic_store(&f->caught_up_ms, now_ms);
    else if (prev >= 0 && offset >= prev &&
             atomic_load(&f->prev_fetch_ms) > atomic_load(&f->caught_up_ms))
        atomic_store(&f->caught_up_ms, atomic_load(&f->prev_fetch_ms));
    atomic_store(&f->prev_leader_leo, leader_leo);
    atomic_store(&f->prev_fetch_ms, now_ms);
    return 0;
}

/* The LEO of ISR member @id as the leader knows it, or -1. */
static int64_t member_leo(sf_partition_t *part, int32_t id, int32_t self) {
    sf_follower_t *f;
    if (id == self)
        return sf_log_end_offset(part->log);
    f = follower_find(part, id);
    return f ? atomic_load(&f->leo) : -1;
}

int sf_leader_update_hw(sf_partition_t *part, const sf_cluster_partition_t *cp, int32_t self) {
    int64_t hw = sf_log_end_offset(part->log), leo;
    int i;
    if (!sf_leader_replicated(cp) || cp->leader != self ||
        atomic_load(&part->lead_epoch) != cp->leader_epoch)
        return 0;
    for (i = 0; i < cp->nisr; i++) {
        if ((leo = member_leo(part, cp->isr[i], self)) < 0)
            return 0; /* a member not heard from yet holds the high watermark */
        if (leo < hw)
            hw = leo;
    }
    for (i = 0; i < SF_PARTITION_MAX_FOLLOWERS; i++) {
        sf_follower_t *f = &part->followers[i];
        if (atomic_load(&f->id) < 0 || !atomic_load(&f->pending))
            continue;
        if ((leo = atomic_load(&f->leo)) < hw)
            hw = leo < 0 ? 0 : leo;
    }
    return sf_log_advance_high_watermark(part->log, hw);
}

int sf_leader_wanted_isr(sf_partition_t *part, const sf_cluster_partition_t *cp, int32_t self,
                         int64_t now_ms, int64_t lag_max_ms, int32_t *isr) {
    int64_t hw = sf_log_high_watermark(part->log);
    int64_t start = atomic_load(&part->lead_start_offset);
    int i, n = 0, changed = 0;
    if (!sf_leader_replicated(cp) || cp->leader != self ||
        atomic_load(&part->lead_epoch) != cp->leader_epoch)
        return 0;
    for (i = 0; i < cp->nreplicas; i++) {
        int32_t id = cp->replicas[i];
        sf_follower_t *f = id == self ? NULL : follower_find(part, id);
        int member = isr_has(cp, id), keep;
        if (id == self) {
            keep = 1;
        } else if (!f) {
            keep = 0;
        } else if (member) {
            keep = now_ms - atomic_load(&f->caught_up_ms) <= lag_max_ms;
        } else {
            /* It caught up lately too (Kafka expands on the follower's fetch): one that has
             * stopped fetching is not added back the moment it was removed. */
            int64_t leo = atomic_load(&f->leo);
            keep = leo >= hw && leo >= start &&
                   now_ms - atomic_load(&f->caught_up_ms) <= lag_max_ms;
            if (keep)
                atomic_store(&f->pending, 1);
        }
        changed |= keep != member;
        if (keep)
            isr[n++] = id;
    }
    return changed ? n : 0;
}

void sf_leader_isr_settled(sf_partition_t *part) {
    int i;
    for (i = 0; i < SF_PARTITION_MAX_FOLLOWERS; i++)
        atomic_store(&part->followers[i].pending, 0);
}
