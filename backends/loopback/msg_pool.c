/* SPDX-License-Identifier: BSD-3-Clause */
#include "msg_pool.h"

#include <stdint.h>
#include <stdlib.h>

void ftc_lb_msg_pool_init(ftc_lb_msg_pool_t *p)
{
    for (size_t c = 0; c < FTC_LB_MSG_CLASSES; c++)
        p->free[c] = NULL;
    p->kept = 0;
}

void ftc_lb_msg_pool_fini(ftc_lb_msg_pool_t *p)
{
    for (size_t c = 0; c < FTC_LB_MSG_CLASSES; c++)
        while (p->free[c] != NULL) {
            ftc_lb_msg_t *m = p->free[c];
            p->free[c] = m->next_free;
            free(m);
        }
    p->kept = 0;
}

/* The smallest class whose buffers hold len bytes, or FTC_LB_MSG_CLASSES. */
static size_t class_of(size_t len)
{
    size_t c = 0;
    while (c < FTC_LB_MSG_CLASSES
           && ((size_t)1 << (FTC_LB_MSG_MIN_SHIFT + c)) < len)
        c++;
    return c;
}

ftc_lb_msg_t *ftc_lb_msg_get(ftc_lb_msg_pool_t *p, size_t len)
{
    size_t c = class_of(len);
    ftc_lb_msg_t *m;
    if (c < FTC_LB_MSG_CLASSES && p->free[c] != NULL) {
        m = p->free[c];
        p->free[c] = m->next_free;
        p->kept -= (size_t)1 << (FTC_LB_MSG_MIN_SHIFT + c);
    } else {
        size_t room = c < FTC_LB_MSG_CLASSES
                          ? (size_t)1 << (FTC_LB_MSG_MIN_SHIFT + c)
                          : len;
        if (room > SIZE_MAX - sizeof(*m))
            return NULL;
        m = malloc(sizeof(*m) + room);
        if (m == NULL)
            return NULL;
        m->cls = c;
    }
    m->next_free = NULL;
    m->len = len;
    return m;
}

void ftc_lb_msg_release(ftc_lb_msg_pool_t *p, ftc_lb_msg_t *m)
{
    if (m == NULL)
        return;
    size_t room = m->cls < FTC_LB_MSG_CLASSES
                      ? (size_t)1 << (FTC_LB_MSG_MIN_SHIFT + m->cls)
                      : 0;
    if (room == 0 || p->kept + room > FTC_LB_MSG_KEEP_BYTES) {
        free(m);
        return;
    }
    p->kept += room;
    m->next_free = p->free[m->cls];
    p->free[m->cls] = m;
}
