/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * exe_filter.bpf.h: --binary mode.  Probes on a file fire in every process
 * that maps it (a library: the whole system); only processes running the
 * named executable count.  User space sets the executable's identity in
 * the kernel's dev_t encoding (MAJOR << 20 | MINOR); 0: no filter.
 */
#ifndef CMON_EXE_FILTER_BPF_H
#define CMON_EXE_FILTER_BPF_H

const volatile __u64 targ_exe_dev = 0;
const volatile __u64 targ_exe_ino = 0;

/* TASK is a BTF pointer (bpf_get_current_task_btf): the chain is read
 * with direct loads, which fault to 0, not one helper call per hop (six
 * of them cost ~34 ns a call, on every entry). */
static __always_inline bool exe_wanted(struct task_struct *task)
{
	struct mm_struct *mm;
	struct file *exe;
	struct inode *inode;

	if (!targ_exe_ino)
		return true;
	mm = task->mm;
	exe = mm ? mm->exe_file : NULL;
	inode = exe ? exe->f_inode : NULL;
	return inode && inode->i_ino == targ_exe_ino && inode->i_sb->s_dev == targ_exe_dev;
}

#endif
