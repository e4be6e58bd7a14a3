/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The portable CRC32C, exposed so tests can check it against the hardware
 * path that ftc_crc32c() may use instead. Same semantics as ftc_crc32c().
 */
#ifndef FTC_LIB_CRC32C_SW_H
#define FTC_LIB_CRC32C_SW_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

uint32_t ftc_crc32c_sw(uint32_t crc, const void *buf, size_t len);
/* The same as ftc_crc32c_message(), in software. */
uint32_t ftc_crc32c_message_sw(const void *msg, size_t len);

/* 1 when ftc_crc32c() uses CPU instructions, 0 when it is the software. */
int ftc_crc32c_hw_enabled(void);

#pragma GCC visibility pop

#endif
