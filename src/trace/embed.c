// SPDX-License-Identifier: MIT
/* The compiled BPF object of src/trace/bpf/sched.bpf.c, linked into ipclab
 * as read-only data (trace_bpf_obj .. trace_bpf_obj_end) so that the binary
 * needs no file beside it. The path comes from mk/trace.mk. */
#ifdef HAVE_LIBBPF
__asm__(".section .rodata\n"
	".balign 8\n"
	".global trace_bpf_obj\n"
	"trace_bpf_obj:\n"
	".incbin \"" TRACE_BPF_OBJ "\"\n"
	".global trace_bpf_obj_end\n"
	"trace_bpf_obj_end:\n"
	".byte 0\n"
	".previous\n");
#endif
