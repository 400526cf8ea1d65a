/* privilege.h: can this process load BPF programs and attach uprobes? */
#ifndef CMON_PRIVILEGE_H
#define CMON_PRIVILEGE_H

/* 0 when root or holding CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN);
 * otherwise -EPERM after printing one error line. */
int privilege__check(void);

#endif
