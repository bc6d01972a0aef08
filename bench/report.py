#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the benchmark table and write results.json (bench/run.sh calls it).

    report.py WORKDIR RESULTS_JSON

Reads what the sections left in WORKDIR (replay.ROUND.json, tracecmd.jsonl,
instr.jsonl, live.jsonl, vm.jsonl, memory.json, skips.jsonl). Every ratio compares two
figures of this run. Targets are judged, never enforced: a target is "met",
"MISSED", or "not measured" (its section was skipped).
"""
import json
import os
import statistics
import sys

TRACE_DAT_NOTE = (
    "trace.dat: written by stock `trace-cmd restore` from the very pages the "
    "replay parses; its headers come from a directory holding the host's "
    "header_page, sched_switch and kernel_stack formats and the kernel "
    "series' user_unwind_* formats (the host kernel lacks them), with the "
    "host's kallsyms, so trace-cmd names kernel frames as we do; it prints "
    "user stacks as raw numbers (our plugin is not loaded).")


def load(path, lines=False):
    if not os.path.exists(path):
        return [] if lines else None
    with open(path) as f:
        if lines:
            return [json.loads(l) for l in f if l.strip()]
        return json.load(f)


def fmt_rate(v):
    if v is None:
        return "-"
    if v >= 1e6:
        return "%.2f M" % (v / 1e6)
    if v >= 1e3:
        return "%.1f k" % (v / 1e3)
    return "%.0f" % v


class Report:
    def __init__(self):
        self.targets = []
        self.out = {}

    def target(self, name, want, value, met, note=""):
        self.targets.append({"target": name, "want": want, "value": value,
                             "met": met, "note": note})

    def row(self, cols, widths):
        print("  " + "  ".join(str(c).rjust(w) if i else str(c).ljust(w)
                               for i, (c, w) in enumerate(zip(cols, widths))))


def replay_rounds(work):
    """The replay's rounds (replay.1.json, ...) and trace-cmd's (tracecmd.jsonl)."""
    reps, n = [], 1
    while True:
        rep = load(os.path.join(work, "replay.%d.json" % n))
        if not rep:
            break
        reps.append(rep)
        n += 1
    return reps, load(os.path.join(work, "tracecmd.jsonl"), lines=True)


def best_rounds(reps, tcs):
    """Each stage's run of least CPU over the rounds, and trace-cmd's."""
    rep = {"capture": reps[0]["capture"], "stages": {}}
    for name in reps[0]["stages"]:
        runs = [x["stages"][name] for x in reps if name in x.get("stages", {})]
        best = dict(min(runs, key=lambda s: s["cpu_seconds"]))
        best["repeats"] = len(runs)
        rep["stages"][name] = best
    tc = dict(min(tcs, key=lambda t: t["user_s"] + t["sys_s"])) if tcs else None
    return rep, tc


def round_ratios(reps, tcs, stage):
    """trace-cmd's CPU per event / the stage's, round by round (same minute)."""
    out = []
    for t in tcs:
        i = t["round"] - 1
        if i < len(reps) and stage in reps[i]["stages"]:
            s = reps[i]["stages"][stage]
            ev = reps[i]["capture"]["events"]
            out.append(((t["user_s"] + t["sys_s"]) / ev) / (s["cpu_seconds"] / s["events"]))
    return out


def fmt_rounds(ratios):
    if len(ratios) < 2:
        return ""
    return " (round by round: %s)" % ", ".join("%.1fx" % x for x in ratios)


def replay(r, work):
    reps, tcs = replay_rounds(work)
    if not reps:
        return
    rep, tc = best_rounds(reps, tcs)
    cap = rep["capture"]
    st = rep["stages"]
    print("\n1. Replay: %d events (%d records, %.0f MB of pages, %d processes, %.1f user "
          "frames/stack, %.0f%% of events share a cookie, %.1f%% come after their stack, "
          "%.0f events/s of trace time), one thread, best of %d rounds (least CPU; a "
          "round runs each stage, then trace-cmd report, once)"
          % (cap["events"], cap["records"], cap["pages"] * 4096 / 1e6, cap["processes"],
             cap["user_frames_per_stack"], 100.0 * cap["shared_cookie_events"] / cap["events"],
             100.0 * cap.get("late_events", 0) / cap["events"],
             cap.get("events_per_trace_second", 0), st["parse"]["repeats"]))
    w = (22, 12, 10, 12, 10, 12)
    r.row(("stage (cumulative)", "events/s", "ns/event", "events/cpu-s", "cpu ns/ev",
           "+cpu ns/ev"), w)
    prev = 0.0
    res = {"capture": cap, "stages": {}}
    for name, label in (("parse", "parse"), ("stitch", "+ stitch"), ("symbol", "+ symbolize"),
                        ("json", "+ JSON to /dev/null"),
                        ("json_interned", "+ JSON, interned"),
                        ("json_compact", "+ JSON, compact"),
                        ("pprof", "+ pprof (no JSON)")):
        s = st.get(name)
        if not s:
            continue
        cpu_ns = s["cpu_seconds"] * 1e9 / s["events"]
        if name in ("json_interned", "json_compact", "pprof") and "symbol" in st:
            # The JSON and pprof rows each add to the symbolize stage.
            prev = st["symbol"]["cpu_seconds"] * 1e9 / st["symbol"]["events"]
        r.row((label, fmt_rate(s["events_per_s"]), "%.0f" % s["ns_per_event"],
               fmt_rate(1e9 / cpu_ns), "%.0f" % cpu_ns, "%+.0f" % (cpu_ns - prev)), w)
        s["json_cpu_ns_per_event"] = cpu_ns - prev
        prev = cpu_ns
        s["cpu_events_per_s"] = 1e9 / cpu_ns
        res["stages"][name] = s
    sym = st.get("symbol", {})
    if sym:
        print("  symbolized: %.1f%% of %d kernel frames, %.1f%% of %d user frames named; "
              "statuses: %s" % (100 * sym["kernel_frames_named"], sym["kernel_frames"],
                                100 * sym["user_frames_named"], sym["user_frames"],
                                ", ".join("%s %d" % (k, sym[k]) for k in
                                          ("stitched", "user_lost", "unwind_failed", "no_user"))))
        print("  user stacks in the kernel series' current layout (tgid, file identity; %d "
              "file records): %d of the user frames named from their file id, %d reads of "
              "/proc/PID/maps" % (cap.get("file_records", 0),
                                  sym.get("user_frames_by_file_id", 0),
                                  sym.get("sym_maps_reads", 0)))
    js = st.get("json")
    ji = st.get("json_interned")
    if js and ji and js.get("json_bytes_per_event"):
        bi, bf = ji["json_bytes_per_event"], js["json_bytes_per_event"]
        ni, nf = ji["json_cpu_ns_per_event"], js["json_cpu_ns_per_event"]
        print("  JSON layouts: full %.0f bytes/event, interned %.0f bytes/event (%d stack "
              "lines, %d epochs): %.3fx the bytes; JSON cpu ns/event full %.0f, interned %.0f: "
              "%.2fx" % (bf, bi, ji["json_stack_lines"], ji["json_epochs"], bi / bf, nf, ni,
                         ni / nf if nf > 0 else float("nan")))
        if "json_fields_cached" in ji and ji.get("events"):
            # The capture's few tasks repeat their fields more than many machines do.
            print("  fields' text from the cache: %.1f%% of interned lines (depends on how "
                  "often a capture's field values repeat)"
                  % (100.0 * ji["json_fields_cached"] / ji["events"]))
        res["json_layouts"] = {"full_bytes_per_event": bf, "interned_bytes_per_event": bi,
                               "bytes_ratio": bi / bf, "full_json_cpu_ns": nf,
                               "interned_json_cpu_ns": ni}
        r.target("replay: interned JSON bytes/event (layout interned, v2)", "<= 150",
                 round(bi, 1), bi <= 150)
        jc = st.get("json_compact")
        if jc and jc.get("json_bytes_per_event"):
            bc, nc = jc["json_bytes_per_event"], jc["json_cpu_ns_per_event"]
            print("  JSON layout compact (v3: formats interned too, events as arrays): "
                  "%.0f bytes/event, %.3fx interned's; JSON cpu ns/event %.0f" % (bc, bc / bi, nc))
            res["json_layouts"].update({"compact_bytes_per_event": bc,
                                        "compact_json_cpu_ns": nc})
            r.target("replay: interned JSON bytes/event (layout compact, v3)", "<= 150",
                     round(bc, 1), bc <= 150)
    elif js:
        r.target("replay: interned JSON bytes/event", "<= 150", None, None,
                 "json_interned stage not run")
    pp = st.get("pprof")
    if pp:
        print("  pprof: %d events in %d samples (%d locations), %d bytes gzipped (%.2f bytes/event),"
              " tables %.1f MB, written in %.3f s"
              % (pp["pprof_events"], pp["pprof_samples"], pp["pprof_locations"],
                 pp["pprof_bytes"], pp["pprof_bytes"] / max(pp["events"], 1),
                 pp["pprof_mem_bytes"] / 1e6, pp["pprof_write_seconds"]))
        res["pprof"] = {k: pp[k] for k in pp if k.startswith("pprof_")}
    if tc and pp:
        tcc = cap["events"] / (tc["user_s"] + tc["sys_s"])
        ratio = pp["cpu_events_per_s"] / tcc
        print("  ratio, pipeline with pprof aggregation / trace-cmd report: %.1fx per cpu-second%s"
              % (ratio, fmt_rounds(round_ratios(reps, tcs, "pprof"))))
        r.target("replay: pprof aggregation vs trace-cmd report (same pages)", ">= 50x",
                 round(ratio, 2), ratio >= 50)
    elif pp:
        r.target("replay: pprof aggregation vs trace-cmd report (same pages)", ">= 50x", None,
                 None, "trace-cmd part skipped")
    if tc and js:
        ev = cap["events"]
        tc_cpu = tc["user_s"] + tc["sys_s"]
        tc["events_per_s"] = ev / tc["wall_s"]
        tc["cpu_events_per_s"] = ev / tc_cpu
        r.row(("trace-cmd report %s" % tc.get("version", ""), fmt_rate(tc["events_per_s"]),
               "%.0f" % (1e9 * tc["wall_s"] / ev), fmt_rate(tc["cpu_events_per_s"]),
               "%.0f" % (1e9 * tc_cpu / ev), ""), w)
        ratio = js["cpu_events_per_s"] / tc["cpu_events_per_s"]
        ratio_wall = js["events_per_s"] / tc["events_per_s"]
        print("  ratio, full pipeline (JSON) / trace-cmd report: %.1fx per cpu-second, %.1fx "
              "wall%s" % (ratio, ratio_wall, fmt_rounds(round_ratios(reps, tcs, "json"))))
        print("  " + TRACE_DAT_NOTE)
        tc["ratio_json_cpu"] = ratio
        tc["ratio_json_wall"] = ratio_wall
        res["trace_cmd"] = tc
        r.target("replay: full pipeline vs trace-cmd report (same pages)", ">= 10x",
                 round(ratio, 2), ratio >= 10)
        # The always-on layouts: symbolized JSON with interned stacks (issue 11).
        for layout in ("interned", "compact"):
            jl = st.get("json_" + layout)
            if not jl:
                continue
            ratio_l = jl["cpu_events_per_s"] / tc["cpu_events_per_s"]
            print("  ratio, symbolized %s JSON / trace-cmd report: %.1fx per cpu-second%s"
                  % (layout, ratio_l, fmt_rounds(round_ratios(reps, tcs, "json_" + layout))))
            tc["ratio_json_%s_cpu" % layout] = ratio_l
            r.target("replay: symbolized %s JSON vs trace-cmd report (same pages)" % layout,
                     ">= 20x", round(ratio_l, 2), ratio_l >= 20)
    else:
        r.target("replay: full pipeline vs trace-cmd report (same pages)", ">= 10x", None,
                 None, "trace-cmd part skipped")
    if sym:
        v = sym["cpu_events_per_s"]
        r.target("replay: stitched + symbolized events/s, one core", ">= 1M", round(v),
                 v >= 1e6)
    if js:
        print("  (rates per cpu-second: the replay runs on one core; wall rates drop when "
              "other work shares the machine)")
    r.out["replay"] = res


def instructions(r, work):
    rows = load(os.path.join(work, "instr.jsonl"), lines=True) or []
    st = {x["stage"]: x for x in rows}
    if "parse" not in st:
        return
    per = {k: v["instructions"] / max(v["events"], 1) for k, v in st.items()
           if k != "trace-cmd report"}
    # Per event past start-up: the difference of two runs, all events and a tenth.
    marg = {k: (v["instructions"] - v["instructions_small"]) / (v["events"] - v["events_small"])
            for k, v in st.items()
            if "instructions_small" in v and v["events"] > v["events_small"]}
    print("\n1b. Instructions per event (callgrind, %d events; the replay's pipeline calls "
          "only): not moved by the load of the machine, unlike the rates above"
          % st["parse"]["events"])
    w = (22, 12, 12, 14, 14)
    r.row(("stage (cumulative)", "instr/event", "+instr/event", "past start-up", "+past start-up"),
          w)
    prev = mprev = 0.0
    res = {"events": st["parse"]["events"], "stages": {}, "past_startup": {}}
    for name, label in (("parse", "parse"), ("stitch", "+ stitch"), ("symbol", "+ symbolize"),
                        ("json", "+ JSON to /dev/null"),
                        ("json_interned", "+ JSON, interned"),
                        ("json_compact", "+ JSON, compact"),
                        ("pprof", "+ pprof (no JSON)"),
                        ("pprof_rounds", "+ pprof, in rounds")):
        if name not in per:
            continue
        if name in ("json_interned", "json_compact", "pprof", "pprof_rounds") and "symbol" in per:
            prev = per["symbol"]
            mprev = marg.get("symbol", 0.0)
        m = marg.get(name)
        r.row((label, "%.0f" % per[name], "%+.0f" % (per[name] - prev),
               "%.0f" % m if m is not None else "-",
               "%+.0f" % (m - mprev) if m is not None else ""), w)
        res["stages"][name] = per[name]
        if m is not None:
            res["past_startup"][name] = m
            mprev = m
        prev = per[name]
    if marg:
        print("  past start-up: (instructions of all events - of a tenth) / (their difference in "
              "events); start-up is what both runs cost alike, e.g. the symbolizer reading and "
              "sorting each binary's symbols")
    tc = st.get("trace-cmd report")
    if tc:
        tc_per = (tc["instructions"] - tc["fixed"]) / max(tc["events"], 1)
        r.row(("trace-cmd report", "%.0f" % tc_per, ""), w[:3])
        print("  trace-cmd report: %.0f M instructions for its start-up (the same headers, "
              "no events) taken out" % (tc["fixed"] / 1e6))
        res["trace_cmd"] = tc_per
        for name, label in (("json", "full pipeline (JSON)"),
                            ("json_interned", "symbolized interned JSON"),
                            ("json_compact", "symbolized compact JSON"),
                            ("pprof", "pipeline with pprof aggregation"),
                            ("pprof_rounds", "pprof aggregation, fed in the daemon's rounds")):
            if name in per and per[name] > 0:
                ratio = tc_per / per[name]
                line = "  ratio, trace-cmd report / %s: %.1fx in instructions" % (label, ratio)
                res["ratio_" + name] = ratio
                if marg.get(name, 0) > 0:
                    res["ratio_past_startup_" + name] = tc_per / marg[name]
                    line += ", %.1fx past start-up (both)" % (tc_per / marg[name])
                print(line)
    r.out["instructions"] = res


def live(r, work):
    for name, title, where in (("live.jsonl", "2. Live on this host", "live"),
                               ("vm-live.jsonl", "2b. Live in the VM (patched kernel, TCG)",
                                "vm live"),
                               ("vm-live-inplace.jsonl",
                                "2c. Live in the VM (patched kernel, TCG), as on the host",
                                "vm live fallback")):
        rows = load(os.path.join(work, name), lines=True) or []
        ping = [x for x in rows if x.get("load", "pingpong") == "pingpong"]
        spawn = [x for x in rows if x.get("load") == "spawn"]
        key = where.replace(" ", "_")
        if ping:
            # The VM's fallback run is a yardstick for TCG, not a target of its own.
            r.out[key] = live_rows(r, ping, title, where, target=where != "vm live fallback")
        if spawn:
            r.out[key + "_spawn"] = spawn_rows(r, spawn, title)
    tcg_share(r)


def tcg_share(r):
    """
    The same reader and mode on the host and in the VM: how much larger TCG
    makes the always-on/drain ratio. TCG runs user code instruction by
    instruction, while the kernel's page copy (most of the drain loop's CPU)
    is one helper call: the ratio of a reader that does more in user space
    grows in the VM whatever that work is.
    """
    host, vmf, vmd = (r.out.get(k, {}).get("cpu_ratio_profiles_over_drain")
                      for k in ("live", "vm_live_fallback", "vm_live"))
    if not (vmf and vmd):
        return
    mode = r.out.get("live", {}).get("steps", [{}])[0].get("mode")
    print("\n2d. What TCG adds: the always-on/drain ratio in fallback mode in the VM %.2fx, "
          "deferred mode in the VM %.2fx" % (vmf, vmd))
    res = {"vm_fallback": vmf, "vm_deferred": vmd}
    if host and mode == "inplace":
        res.update(host_fallback=host, tcg_factor=vmf / host,
                   vm_deferred_over_fallback=vmd / vmf)
        print("  fallback mode on this host %.2fx: TCG makes the same reader's ratio %.2fx "
              "larger; deferred mode costs %.2fx fallback mode's in the VM"
              % (host, vmf / host, vmd / vmf))
    else:
        print("  (no fallback-mode figure from this host in this run: "
              "BENCH_SECTIONS=\"live vm\" gives one)")
    r.out["tcg_share"] = res
    # The VM target's line says what the yardstick found.
    for t in r.targets:
        if t["target"].startswith("vm live:") and not t["met"] and not t["note"]:
            t["note"] = ("TCG inflates it: fallback mode %.2fx in the guest%s, deferred mode %.2fx there"
                         % (vmf, " vs %.2fx on the host" % host if "host_fallback" in res
                            else "", vmd))


def spawn_rows(r, rows, title):
    """Short-lived processes: a figure, not one of issue 11's targets."""
    print("\n%s, short-lived processes (bench/progs/spawn.c, one spawner per CPU, "
          "uncapped, %d s)" % (title, rows[0]["secs"]))
    w = (8, 11, 11, 8, 10, 9, 11)
    r.row(("reader", "procs/s", "events/s", "cpu %", "us/event", "overruns", "start-up"), w)
    res = {"steps": rows}
    for x in rows:
        x["events_per_s"] = x["events"] / x["secs"]
        x["us_per_event"] = 1e6 * x["cpu_s"] / x["events"] if x["events"] else 0
        r.row((x["reader"], x.get("processes_per_s", 0), fmt_rate(x["events_per_s"]),
               "%.1f" % (100.0 * x["cpu_s"] / x["secs"]), "%.2f" % x["us_per_event"],
               x["overruns"] + x["dropped"], startup(x)), w)
    by = {x["reader"]: x for x in rows}
    p, d = by.get("profiles"), by.get("drain")
    if p and d and d["us_per_event"]:
        res["cpu_ratio_profiles_over_drain"] = p["us_per_event"] / d["us_per_event"]
        print("  always-on configuration / drain loop CPU per event: %.1fx (each process "
              "is new to the daemon: its pid, its maps, its stacks)"
              % res["cpu_ratio_profiles_over_drain"])
    return res


def cpu_split(rows):
    """Per reader, its steps' user and system CPU per event (us), from clock ticks."""
    acc = {}
    for x in rows:
        # A reader gone before the step's end reads "0 0": no split of that step.
        if ("user_ticks" not in x or not x.get("clk_tck") or not x["events"]
                or x["user_ticks"] < 0 or x["sys_ticks"] < 0):
            continue
        a = acc.setdefault(x["reader"], [0, 0, 0])
        a[0] += x["user_ticks"] / x["clk_tck"]
        a[1] += x["sys_ticks"] / x["clk_tck"]
        a[2] += x["events"]
    return {rd: (1e6 * u / n, 1e6 * sy / n) for rd, (u, sy, n) in acc.items() if n}


def startup(x):
    """A step's warm-up (BENCH_LIVE_WARMUP): its CPU, not in the step's figures."""
    if not x.get("warmup_secs"):
        return "-"
    return "%.0f ms" % (1e3 * x.get("warmup_cpu_s", 0))


def with_startup(x):
    """CPU per event of a step with its warm-up counted in, as if measured from the start."""
    ev = x["events"] + x.get("warmup_events", 0)
    return 1e6 * (x["cpu_s"] + x.get("warmup_cpu_s", 0)) / ev if ev else 0


def paired_ratios(rows, rate, per_event=lambda x: x["us_per_event"]):
    """Always-on / drain CPU per event of each round at @rate, both without overruns."""
    out = []
    for rnd in sorted({x.get("round", 1) for x in rows}):
        step = {x["reader"]: x for x in rows
                if x.get("round", 1) == rnd and x["rate_cap"] == rate
                and x["overruns"] + x["dropped"] == 0}
        p, d = step.get("profiles"), step.get("drain")
        if p and d and per_event(d):
            out.append(per_event(p) / per_event(d))
    return out


def live_rows(r, rows, title, where, target=True):
    if rows[0].get("mode") == "deferred":
        what = "deferred mode: sched_switch + kernel_stack + cookie per event, stacks apart"
    else:
        what = "fallback mode: sched_switch + kernel_stack + in-place user_stack per event"
    print("\n%s (%s), ping-pong pinned to CPUs 0 and 1, %d s per step"
          % (title, what, rows[0]["secs"]))
    w = (8, 9, 11, 11, 8, 10, 9, 11)
    r.row(("reader", "trips cap", "trips/s", "events/s", "cpu %", "us/event", "overruns",
           "start-up"), w)
    best = {}
    for x in rows:
        eps = x["events"] / x["secs"]
        cpu = 100.0 * x["cpu_s"] / x["secs"]
        us = 1e6 * x["cpu_s"] / x["events"] if x["events"] else 0
        x.update(events_per_s=eps, cpu_percent=cpu, us_per_event=us)
        r.row((x["reader"], x["rate_cap"] or "none", x["round_trips_per_s"], fmt_rate(eps),
               "%.1f" % cpu, "%.2f" % us, x["overruns"] + x["dropped"], startup(x)), w)
        if x["overruns"] + x["dropped"] == 0 and eps > best.get(x["reader"], {}).get(
                "events_per_s", -1):
            best[x["reader"]] = x
    res = {"steps": rows, "best": best}
    split = cpu_split(rows)
    if split:
        res["user_sys_us_per_event"] = split
        print("  user + system CPU per event, all steps (clock ticks): %s"
              % ", ".join("%s %.2f + %.2f us" % (rd, u, sy) for rd, (u, sy) in split.items()))
    for rd in ("daemon", "profiles", "drain"):
        if rd in best:
            b = best[rd]
            print("  %s: highest rate without overruns %s events/s at %.1f%% of a core "
                  "(%.2f us/event)" % (rd, fmt_rate(b["events_per_s"]), b["cpu_percent"],
                                        b["us_per_event"]))
        else:
            print("  %s: overruns at every rate" % rd)
    for x in rows:
        if x["reader"] == "profiles" and x.get("profile_files"):
            per = x["profile_bytes"] / x["profile_files"]
            print("  always-on output, cap %s: %d pprof profile(s) (--profile-interval %s; a "
                  "step shorter than that writes one, cut at exit), %.0f bytes each on average "
                  "(%.1f bytes/event)" % (x["rate_cap"] or "none", x["profile_files"],
                                          x.get("profile_interval", "?"), per,
                                          x["profile_bytes"] / max(x["events"], 1)))
            res.setdefault("pprof_bytes_per_interval", {})[x["rate_cap"]] = per
    d, c = best.get("daemon"), best.get("drain")
    pr = best.get("profiles")
    if pr and c and c["us_per_event"]:
        res["cpu_ratio_profiles_over_drain"] = pr["us_per_event"] / c["us_per_event"]
        # Rounds (BENCH_LIVE_ROUNDS): each round's always-on reader against
        # the drain loop that ran right after it, at the always-on reader's
        # best rate; the median of those, not one pair of steps.
        pairs = paired_ratios(rows, pr["rate_cap"])
        if len(pairs) > 1:
            res["cpu_ratios_by_round"] = pairs
            res["cpu_ratio_profiles_over_drain"] = statistics.median(pairs)
            print("  always-on configuration (interval profiles, no JSON) / drain loop CPU per "
                  "event, round by round: %s; median %.2fx"
                  % (", ".join("%.2fx" % x for x in pairs),
                     res["cpu_ratio_profiles_over_drain"]))
        else:
            print("  always-on configuration (interval profiles, no JSON) / drain loop CPU per "
                  "event: %.1fx" % res["cpu_ratio_profiles_over_drain"])
        if rows[0].get("warmup_secs"):
            # What the same steps give measured from the reader's start.
            cold = paired_ratios(rows, pr["rate_cap"], with_startup)
            if cold:
                res["cpu_ratio_with_startup"] = statistics.median(cold)
                print("  the same, start-up counted in (each step from tracing on, its "
                      "%s s warm-up and its CPU included): %s; median %.2fx"
                      % (rows[0]["warmup_secs"], ", ".join("%.2fx" % x for x in cold),
                         res["cpu_ratio_with_startup"]))
        if target:
            r.target("%s: always-on daemon (profiles) CPU per event vs the drain loop (%s)"
                     % (where, rows[0].get("mode")),
                     "<= 1.5x", round(res["cpu_ratio_profiles_over_drain"], 2),
                     res["cpu_ratio_profiles_over_drain"] <= 1.5)
    if d and c:
        res["cpu_ratio_daemon_over_drain"] = (d["us_per_event"] / c["us_per_event"]
                                             if c["us_per_event"] else None)
        proj = d["us_per_event"] * 100.0
        res["daemon_projected_cpu_percent_at_1M"] = proj
        print("  daemon / drain loop CPU per event: %.1fx; at 1 M events/s the daemon would "
              "need %.0f%% of a core (projected from us/event)"
              % (res["cpu_ratio_daemon_over_drain"] or 0, proj))
        if where != "live":
            return res
        own = [x for x in rows if x["reader"] == "daemon" and x["overruns"] + x["dropped"]
               and not any(y["reader"] == "drain" and y["rate_cap"] == x["rate_cap"]
                           and y["overruns"] + y["dropped"] for y in rows)]
        res["steps_with_overruns_of_its_own"] = len(own)
        met = d["events_per_s"] >= 1e6 and d["cpu_percent"] <= 25 and not own
        r.target("live: daemon sustains 1M events/s, <= 25% of a core, no overruns of its own",
                 ">= 1M ev/s, <= 25%, 0", "%s ev/s at %.1f%%, %d steps with own overruns"
                 % (fmt_rate(d["events_per_s"]), d["cpu_percent"], len(own)), met,
                 "load-limited: the ping-pong never reached 1M events/s here"
                 if max(x["events_per_s"] for x in rows) < 1e6 else "")
    return res


def vm(r, work):
    rows = load(os.path.join(work, "vm.jsonl"), lines=True)
    img = load(os.path.join(work, "vm-image.json")) or {}
    if not rows:
        return
    guest = next((x["guest"] for x in rows if "guest" in x), {})
    print("\n3. VM (%s, %s CPU%s, TCG; times are ratios within this boot), user stacks "
          "of a 30-deep frame-pointer chain"
          % (guest.get("kernel", "?"), guest.get("cpus", "?"),
             "s" if guest.get("cpus") != 1 else ""))
    runs = {}
    skipped = {}
    for x in rows:
        if "result" in x:
            m = x["result"]["mode"]
            runs.setdefault((x["load"], m), []).append(x["result"])
        elif "skipped" in x:
            skipped[(x["load"], x["mode"])] = x["skipped"]
    w = (9, 9, 11, 12, 10, 10, 10, 10, 9)
    r.row(("load", "mode", "bytes/ev", "ustack B/ev", "frames", "ev/stack", "ms", "slowdown",
           "overrun"), w)
    res = {"image": img.get("image"), "guest": guest, "runs": {}}
    for load_name in ("syscall", "pingpong"):
        base = runs.get((load_name, "untraced"))
        base_ms = min(x["elapsed_ns"] for x in base) / 1e6 if base else None
        for mode in ("untraced", "none", "inplace", "deferred"):
            rs = runs.get((load_name, mode))
            if not rs:
                if (load_name, mode) in skipped:
                    print("  %-9s %-9s SKIPPED: %s" % (load_name, mode,
                                                     skipped[(load_name, mode)]))
                continue
            first = rs[0]
            ms = min(x["elapsed_ns"] for x in rs) / 1e6
            slow = ms / base_ms if base_ms else None
            ent = {"elapsed_ms_min": ms, "slowdown": slow, "rounds": len(rs)}
            for k in ("rb_bytes_per_event", "user_stack_bytes_per_event",
                      "user_frames_per_stack", "events_per_stack", "events", "rb_bytes",
                      "overrun", "records", "record_bytes", "unwind_stack_bytes_per_record",
                      "unwind_stack_bytes_per_record_no_files",
                      "user_stack_bytes_per_event_no_files"):
                if k in first:
                    ent[k] = first[k]
            ent["overrun"] = max(x.get("overrun", 0) for x in rs)
            res["runs"]["%s/%s" % (load_name, mode)] = ent
            r.row((load_name, mode,
                   "%.1f" % ent["rb_bytes_per_event"] if "rb_bytes_per_event" in ent else "-",
                   "%.1f" % ent["user_stack_bytes_per_event"]
                   if "user_stack_bytes_per_event" in ent else "-",
                   "%.1f" % ent["user_frames_per_stack"]
                   if "user_frames_per_stack" in ent else "-",
                   "%.2f" % ent["events_per_stack"] if ent.get("events_per_stack") else "-",
                   "%.0f" % ms, "%.2fx" % slow if slow else "-",
                   ent["overrun"] if mode != "untraced" else "-"), w)
    # File identity (file_bases, file_ids, frame_files and the file records),
    # against the same records laid out as before it: one run, one workload.
    for load_name in ("syscall", "pingpong"):
        d = res["runs"].get("%s/deferred" % load_name)
        if not d or "unwind_stack_bytes_per_record_no_files" not in d:
            continue
        with_f = d["unwind_stack_bytes_per_record"]
        without = d["unwind_stack_bytes_per_record_no_files"]
        ev_with = d["user_stack_bytes_per_event"]
        ev_without = d["user_stack_bytes_per_event_no_files"]
        print("  %s load, file identity: %.1f vs %.1f bytes per stack record (%.2fx), "
              "%.1f vs %.1f user-stack bytes per event (%.2fx), %d file records"
              % (load_name, with_f, without, with_f / without, ev_with, ev_without,
                 ev_with / ev_without if ev_without else 0,
                 d.get("records", {}).get("user_unwind_file", 0)))
        res["runs"]["%s/deferred" % load_name]["file_identity_stack_bytes_ratio"] = \
            with_f / without
    ip = res["runs"].get("syscall/inplace")
    de = res["runs"].get("syscall/deferred")
    if ip and de:
        ratio = de["rb_bytes_per_event"] / ip["rb_bytes_per_event"]
        us_ratio = de["user_stack_bytes_per_event"] / ip["user_stack_bytes_per_event"]
        per_frame_ip = ip["user_stack_bytes_per_event"] / ip["user_frames_per_stack"]
        per_frame_de = (de["user_stack_bytes_per_event"] / de["user_frames_per_stack"]
                        if de.get("user_frames_per_stack") else None)
        res["syscall_deferred_over_inplace_bytes"] = ratio
        res["syscall_deferred_over_inplace_user_stack_bytes"] = us_ratio
        res["user_stack_bytes_per_frame"] = {"inplace": per_frame_ip, "deferred": per_frame_de}
        print("  syscall load, deferred / in-place: %.2fx ring-buffer bytes per event (%.2fx "
              "for the user-stack records alone), for %.1f vs %.1f frames per stack: %.1f vs "
              "%.1f user-stack bytes per event per delivered frame"
              % (ratio, us_ratio, de["user_frames_per_stack"], ip["user_frames_per_stack"],
                 per_frame_de or 0, per_frame_ip))
        full = de["user_frames_per_stack"] > 8
        r.target("vm: deferred bytes/event vs in-place, syscall load, full-depth stacks",
                 "<= 0.5x", round(ratio, 3), ratio <= 0.5 and full,
                 "each event still costs a 20-byte cookie record, and the one stack of "
                 "its entry (24 + 8 bytes/frame) is shared by only %.1f events"
                 % de["events_per_stack"] if ratio > 0.5 else "")
    else:
        r.target("vm: deferred bytes/event vs in-place, syscall load, full-depth stacks",
                 "<= 0.5x", None, None, "deferred or in-place run missing")
    r.out["vm"] = res


def memory(r, work):
    m = load(os.path.join(work, "memory.json"))
    if not m:
        return
    print("\n4. Memory: %d events waiting for their stacks at once (max_pending bound %d), "
          "symbolizer and JSON writer set up" % (m["max_pending_events"],
                                                   m["max_pending_events_bound"]))
    print("  RSS %.1f MiB before, %.1f MiB at the most pending, peak (VmHWM) %.1f MiB: "
          "%.0f bytes per pending event; %d stitched once the stacks came, %d evicted"
          % (m["rss_before_mib"], m["rss_at_max_pending_mib"], m["vm_hwm_mib"],
             m["bytes_per_pending_event"], m["stitched"], m["evicted_events"]))
    if m.get("packed_bodies_at_max"):
        per_body = m["packed_body_bytes_at_max"] / m["packed_bodies_at_max"]
        print("  the pending events shared %d distinct bodies (record data, comm, kernel "
              "stack) of %.0f bytes each, %.1f MiB; were every body distinct, a pending "
              "event would cost about %.0f bytes more"
              % (m["packed_bodies_at_max"], per_body,
                 m["packed_body_bytes_at_max"] / 1048576.0, per_body))
    r.target("memory: bytes per pending event, 1M pending events", "<= 64",
             round(m["bytes_per_pending_event"]), m["bytes_per_pending_event"] <= 64)
    r.target("memory: RSS at 1M pending events, default bounds", "<= 64 MiB",
             round(m["rss_at_max_pending_mib"], 1), m["rss_at_max_pending_mib"] <= 64,
             "includes %.0f MiB before the first event (symbolizer, kallsyms, JSON writer)"
             % m["rss_before_mib"])
    r.target("memory: peak RSS with default bounds, 1M pending events", "<= 64 MiB",
             round(m["vm_hwm_mib"], 1), m["vm_hwm_mib"] <= 64,
             "after the most pending: up to %d stacks kept at once (bound %d) when the "
             "held stacks come in one burst" % (m.get("max_kept_stacks", 0),
                                                m["max_stacks_bound"]))
    r.out["memory"] = m


def profiles(r, work):
    p = load(os.path.join(work, "profiles.json"))
    if not p:
        return
    print("\n5. Profiles: the pprof sink on %d events, %d processes of %d events each "
          "(short-lived: new pid, new stack ids, the same frames) vs the same events "
          "from one process" % (p["events"], p["processes"], p["events_per_process"]))
    w = (10, 12, 10, 10, 10, 12)
    r.row(("stream", "ns/event", "cut ms", "bytes", "samples", "table MiB"), w)
    for name in ("one", "procs"):
        x = p[name]
        r.row((name, "%.1f" % x["ns_per_event"], "%.2f" % x["cut_ms"], x["bytes"],
               x["samples"], "%.1f" % (x["mem_bytes"] / 1048576.0)), w)
    print("  short-lived / one process: %.2fx per event; the cut %.1f ms per %d processes"
          % (p["ratio_ns_per_event"], p["procs"]["cut_ms"], p["processes"]))
    r.out["profiles"] = p


def main():
    work, dest = sys.argv[1], sys.argv[2]
    r = Report()
    print("\n================ trace-defer benchmark ================")
    replay(r, work)
    instructions(r, work)
    live(r, work)
    vm(r, work)
    memory(r, work)
    profiles(r, work)
    skips = load(os.path.join(work, "skips.jsonl"), lines=True)
    for s in skips:
        print("\nSKIPPED: %s: %s" % (s["section"], s["skipped"]))
    have = {t["target"].split(":")[0] for t in r.targets}
    for sec, name in (("replay", "replay: stitched + symbolized events/s, one core"),
                      ("live", "live: daemon sustains 1M events/s"),
                      ("vm", "vm: deferred bytes/event vs in-place"),
                      ("memory", "memory: peak RSS with default bounds")):
        if sec not in have:
            r.target(name, "", None, None, "not measured")
    print("\nTargets (reported, not enforced):")
    for t in r.targets:
        state = {True: "met", False: "MISSED", None: "not measured"}[t["met"]]
        print("  %-72s %-10s %-8s %s%s" % (t["target"], t["want"],
                                          "" if t["value"] is None else t["value"], state,
                                          (" (%s)" % t["note"]) if t["note"] else ""))
    r.out["targets"] = r.targets
    r.out["skipped"] = skips
    with open(dest, "w") as f:
        json.dump(r.out, f, indent=1, sort_keys=True)
    print("\nresults: %s" % dest)


if __name__ == "__main__":
    main()
