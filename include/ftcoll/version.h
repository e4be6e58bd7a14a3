/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The library's version: the macros say what a program was compiled
 * against, ftc_version what it runs with.
 */
#ifndef FTCOLL_VERSION_H
#define FTCOLL_VERSION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FTC_VERSION_MAJOR 0
#define FTC_VERSION_MINOR 11
#define FTC_VERSION_PATCH 0

/* "major.minor.patch"; each number too, through any pointer not NULL. */
const char *ftc_version(uint32_t *major, uint32_t *minor, uint32_t *patch);

#ifdef __cplusplus
}
#endif
#endif
