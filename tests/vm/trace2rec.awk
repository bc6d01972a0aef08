#!/usr/bin/gawk -f
# Turn one CPU's ftrace text output (per_cpu/cpuN/trace) into records,
# one per line, tab separated:
#
#   E  cpu pid ts event cookie state
#                                  an event; cookie is the one recorded right
#                                  after it by the same task, or "-"; state is
#                                  prev_state for sched_switch, else "-"
#   S  cpu pid ts cookie nframes addr,addr,...
#                                  a user_unwind_stack record
#
# Run with -v cpu=N. The kernel_stack lines of the stacktrace option, if
# any, are skipped: the cookie follows them.
function flush_event() {
	if (ev_name != "")
		printf "E\t%d\t%s\t%s\t%s\t%s\t%s\n", cpu, ev_pid, ev_ts, ev_name, ev_cookie, ev_state
	ev_name = ""
}
function flush_stack() {
	if (st_cookie != "")
		printf "S\t%d\t%s\t%s\t%s\t%d\t%s\n", cpu, st_pid, st_ts, st_cookie, st_n, st_addrs
	st_cookie = ""
}
/^#/ { next }
# The last line of a stack too deep for the text output
/^ => \.\.\. [0-9]+ more frames$/ { next }
# " => 0x401136", or " =>  <0000000000401136>" without sym-userobj
/^ => / {
	if (st_cookie != "") {
		a = $0
		if (match(a, /<([0-9a-f]+)>/, h))
			a = sprintf("0x%x", strtonum("0x" h[1]))
		else
			a = $2
		st_addrs = st_addrs (st_addrs == "" ? "" : ",") a
		st_n++
	}
	next
}
/^ *<stack trace>/ { next }
{
	if (!match($0, /-([0-9]+) +\[[0-9]+\] [^ ]+ +([0-9]+\.[0-9]+): (.*)$/, m))
		next
	pid = m[1]; ts = m[2]; rest = m[3]
	if (match(rest, /^<user stack unwind cookie=(0x[0-9a-f]+)>$/, c)) {
		flush_stack()
		if (ev_name != "" && ev_pid == pid && ev_cookie == "-")
			ev_cookie = c[1]
		else
			printf "C\t%d\t%s\t%s\t%s\n", cpu, pid, ts, c[1]
		next
	}
	# " dropped=N": cut to fit a sub-buffer; " exec": unwound after an execve()
	if (match(rest, /^<user stack unwind cookie=(0x[0-9a-f]+) frames=([0-9]+)( dropped=[0-9]+)?( exec)?>$/, c)) {
		flush_stack()
		st_pid = pid; st_ts = ts; st_cookie = c[1]; st_n = 0; st_addrs = ""
		next
	}
	flush_stack()
	flush_event()
	# Syscall events print as "sys_x(args)" and "sys_x -> ret"
	if (match(rest, /^(sys_[a-z0-9_]+)\(/, w))
		ev_name = "sys_enter:" w[1]
	else if (match(rest, /^(sys_[a-z0-9_]+) -> /, w))
		ev_name = "sys_exit:" w[1]
	else if (match(rest, /^[^: ]+/))
		ev_name = substr(rest, RSTART, RLENGTH)
	else
		ev_name = "?"
	ev_pid = pid; ev_ts = ts; ev_cookie = "-"; ev_state = "-"
	if (match(rest, / prev_state=([^ ]+) /, w))
		ev_state = w[1]
}
END { flush_stack(); flush_event() }
