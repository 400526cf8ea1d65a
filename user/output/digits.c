// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* digits.c: two decimal digits at a time, for the writers' integer formatting. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include "writer_impl.h"

const char writer__digits2[200] =
	"00010203040506070809"
	"10111213141516171819"
	"20212223242526272829"
	"30313233343536373839"
	"40414243444546474849"
	"50515253545556575859"
	"60616263646566676869"
	"70717273747576777879"
	"80818283848586878889"
	"90919293949596979899";
