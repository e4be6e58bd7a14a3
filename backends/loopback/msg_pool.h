/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loopback's message buffers: a copy of every message sent lives from
 * the send to its arrival, and a large simulation has millions of them.
 * Buffers come in power-of-two size classes and go back to their class's
 * free list when the message is handed over or dropped, so that a run in
 * its steady state allocates nothing per message (DESIGN.md's rule for
 * hot paths) and reuses buffers that are still in cache. The free lists
 * hold at most FTC_LB_MSG_KEEP_BYTES in all: a flood of large messages
 * must not leave its buffers behind (tests/test_hostile.c bounds what a
 * flood may keep). Messages larger than the largest class get a buffer of
 * their own. Internal to the loopback backend.
 */
#ifndef FTC_LB_MSG_POOL_H
#define FTC_LB_MSG_POOL_H

#include <stddef.h>

/* Classes hold 2^FTC_LB_MSG_MIN_SHIFT .. 2^FTC_LB_MSG_MAX_SHIFT bytes of
 * payload. */
#define FTC_LB_MSG_MIN_SHIFT 6
#define FTC_LB_MSG_MAX_SHIFT 16
#define FTC_LB_MSG_CLASSES (FTC_LB_MSG_MAX_SHIFT - FTC_LB_MSG_MIN_SHIFT + 1)
/* Payload bytes the free lists keep at most: 2048 buffers of a 128-byte
 * class, a gossip message's. */
#define FTC_LB_MSG_KEEP_BYTES ((size_t)256 * 1024)

typedef struct ftc_lb_msg {
    struct ftc_lb_msg *next_free;  /* on its class's free list */
    size_t cls;                    /* its class; FTC_LB_MSG_CLASSES: its
                                      own buffer, freed on release */
    size_t len;
    unsigned char data[];
} ftc_lb_msg_t;

typedef struct ftc_lb_msg_pool {
    ftc_lb_msg_t *free[FTC_LB_MSG_CLASSES];
    size_t kept;                   /* payload bytes on the free lists */
} ftc_lb_msg_pool_t;

void ftc_lb_msg_pool_init(ftc_lb_msg_pool_t *p);
/* Frees every buffer on the free lists: release every message first. */
void ftc_lb_msg_pool_fini(ftc_lb_msg_pool_t *p);

/* A message of len bytes (data uninitialised, len set); NULL if out of
 * memory. */
ftc_lb_msg_t *ftc_lb_msg_get(ftc_lb_msg_pool_t *p, size_t len);
void ftc_lb_msg_release(ftc_lb_msg_pool_t *p, ftc_lb_msg_t *m);

#endif
