/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * maps.bpf.h: a hash map's value, made when it is missing.  Values too
 * large for a BPF stack come from a one-slot array holding an empty one
 * (TEMPLATE); another CPU may make the same key first (-EEXIST), so the
 * value is looked up again either way.
 */
#ifndef CMON_MAPS_BPF_H
#define CMON_MAPS_BPF_H

/* MAP's value at KEY, made from TEMPLATE's slot 0 when missing; NULL when
 * it cannot be (*ERR: the update's error, when ERR is not NULL). */
static __always_inline void *map_lookup_or_make(void *map, const void *key, void *template,
						long *err)
{
	void *v = bpf_map_lookup_elem(map, key), *empty;
	__u32 zero = 0;
	long e;

	if (v)
		return v;
	empty = bpf_map_lookup_elem(template, &zero);
	if (!empty)
		return NULL;
	e = bpf_map_update_elem(map, key, empty, BPF_NOEXIST);
	if (err)
		*err = e;
	return bpf_map_lookup_elem(map, key);
}

#endif
