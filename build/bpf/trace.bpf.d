build/bpf/trace.bpf.o: bpf/trace.bpf.c vmlinux/vmlinux.h bpf/cmon.h \
  bpf/mem.bpf.h bpf/shadow_stack.bpf.h

vmlinux/vmlinux.h:

bpf/cmon.h:

bpf/mem.bpf.h:

bpf/shadow_stack.bpf.h:
