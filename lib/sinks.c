// SPDX-License-Identifier: GPL-2.0
/*
 * The library's writers as pipeline sinks (see trace-defer/pipeline.h).
 */
#include <errno.h>

#include <trace-defer/pipeline.h>
#include <trace-defer/pprof.h>

static int json_write(void *priv, const struct td_resolved *r)
{
	struct td_json_sink *js = priv;
	int ret;

	/* No stream to write to (a file that could not be reopened): lost, and counted. */
	if (!js->f) {
		js->failed++;
		return -EBADF;
	}
	ret = td_json_writer_write(js->jw, js->f, r);
	if (!ret) {
		js->written++;
	} else {
		js->error = ret;
		js->failed++;
	}
	return ret;
}

static int folded_write(void *priv, const struct td_resolved *r)
{
	return td_folded_add(priv, r);
}

static int pprof_write(void *priv, const struct td_resolved *r)
{
	return td_pprof_add(priv, r);
}

const struct td_sink_ops td_json_sink_ops = { .name = "json", .write = json_write };
const struct td_sink_ops td_folded_sink_ops = {
	.name = "folded", .write = folded_write, .no_fields = true, .no_tracer_frames = true,
};
const struct td_sink_ops td_pprof_sink_ops = {
	.name = "pprof", .write = pprof_write, .no_fields = true, .no_tracer_frames = true,
};
