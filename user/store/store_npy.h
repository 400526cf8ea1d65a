/*
 * store_npy.h: the header of a NumPy .npy file (format 1.0), so that an
 * exported buffer loads with numpy.load to its dtype and shape.
 */
#ifndef CMON_STORE_NPY_H
#define CMON_STORE_NPY_H

#include <stddef.h>
#include <stdint.h>

/*
 * Write into BUF (CAP bytes) the .npy header for an array of DTYPE (a
 * numeric numpy dtype string, see cmon_dtype_numeric) and SHAPE (NDIM dims,
 * C order): magic "\x93NUMPY", version 1.0, header length, then the dict
 * {'descr': ..., 'fortran_order': False, 'shape': (...), } padded with
 * spaces and a newline so that the data starts at a multiple of 64.
 * A descr without a byte order, or with '=', is written little-endian
 * ('<'; captures come from this machine).  Returns the header's length, or
 * -EINVAL (not a numeric dtype), -ENOSPC (CAP too small), -E2BIG (header
 * over 65535 bytes).
 */
int store_npy__header(const char *dtype, unsigned ndim, const uint64_t *shape, char *buf,
		      size_t cap);

#endif
