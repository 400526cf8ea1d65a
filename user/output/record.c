// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "record.h"

const char *call_status__name(enum call_status s)
{
	switch (s) {
	case CALL_OK:
		return "ok";
	case CALL_NORETURN:
		return "noreturn";
	case CALL_ENTRY_ONLY:
		return "entry";
	case CALL_TAILCALL:
		return "tailcall";
	case CALL_NEVER_RETURNS:
		return "never-returns";
	}
	return "unknown";
}
