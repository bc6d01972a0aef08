// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graph SVG from folded stacks. The stacks are merged into a tree
 * (root "all", then each line's frames left to right); every node becomes a
 * rectangle as wide as its share of the samples, its children stacked on
 * it, in name order. The SVG is static and self-contained: a <title> per
 * frame gives the name and counts as a tooltip in any browser, and frames
 * too narrow to see are left out with everything above them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <trace-defer/output.h>

#define FG_XPAD		10.0
#define FG_FONT_SIZE	12.0
#define FG_CHAR_WIDTH	(FG_FONT_SIZE * 0.59)	/* average glyph width of Verdana */

struct fg_node {
	struct fg_node *first, *last, *sibling;
	uint64_t count;
	size_t len;
	char name[];
};

struct fg_ctx {
	struct fg_node *root;
	FILE *f;
	double scale;		/* pixels per sample */
	double min_width;
	unsigned int fh;	/* frame height */
	unsigned int height;	/* image height */
	uint64_t total;
};

static struct fg_node *node_new(const char *name, size_t len)
{
	struct fg_node *n = calloc(1, sizeof(*n) + len + 1);

	if (!n)
		return NULL;
	memcpy(n->name, name, len);
	n->len = len;
	return n;
}

static void node_free(struct fg_node *n)
{
	struct fg_node *c, *next;

	if (!n)
		return;
	for (c = n->first; c; c = next) {
		next = c->sibling;
		node_free(c);
	}
	free(n);
}

static struct fg_node *child(struct fg_node *parent, const char *name, size_t len)
{
	struct fg_node *c, *prev = NULL, *n;

	/* Sorted input mostly extends the last child: try it first. */
	if (parent->last && parent->last->len == len && !memcmp(parent->last->name, name, len))
		return parent->last;
	for (c = parent->first; c; prev = c, c = c->sibling) {
		int d = strncmp(c->name, name, len);

		if (!d && c->len == len)
			return c;
		if (d > 0 || (!d && c->len > len))
			break;	/* children are kept in name order */
	}
	n = node_new(name, len);
	if (!n)
		return NULL;
	n->sibling = c;
	if (prev)
		prev->sibling = n;
	else
		parent->first = n;
	if (!c)
		parent->last = n;
	return n;
}

static int add_stack(const char *stack, uint64_t count, void *arg)
{
	struct fg_ctx *ctx = arg;
	struct fg_node *n = ctx->root;
	const char *p = stack;

	n->count += count;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		n = child(n, p, len);
		if (!n)
			return -ENOMEM;
		n->count += count;
		p += len;
		if (*p == ';')
			p++;
	}
	return 0;
}

/* Depth of the tallest visible frame (the root is depth 0). */
static unsigned int max_depth(const struct fg_ctx *ctx, const struct fg_node *n)
{
	unsigned int d = 0, cd;
	const struct fg_node *c;

	for (c = n->first; c; c = c->sibling) {
		if (c->count * ctx->scale < ctx->min_width)
			continue;
		cd = max_depth(ctx, c) + 1;
		if (cd > d)
			d = cd;
	}
	return d;
}

/* XML text: escape markup, replace control characters and invalid UTF-8. */
static void put_escaped(FILE *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n;

	while (i < len) {
		n = td_utf8_seq_len(u + i, len - i);
		if (n > 1) {
			fwrite(s + i, 1, n, f);
			i += n;
			continue;
		}
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			putc(!n || u[i] < 0x20 || u[i] == 0x7f ? '?' : s[i], f);
			break;
		}
		i++;
	}
}

static uint32_t name_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

/* Length of the label that fits in @width pixels: the name, or a prefix + "..". */
static size_t label_len(const struct fg_node *n, double width, bool *cut)
{
	double fit = (width - 6.0) / FG_CHAR_WIDTH;
	size_t len;

	*cut = false;
	if (fit < 3.0)
		return 0;
	if ((double)n->len <= fit)
		return n->len;
	*cut = true;
	len = (size_t)fit - 2;
	/* Do not split a UTF-8 sequence. */
	while (len && ((unsigned char)n->name[len] & 0xc0) == 0x80)
		len--;
	return len;
}

static void draw(struct fg_ctx *ctx, const struct fg_node *n, unsigned int depth, double x)
{
	double w = n->count * ctx->scale;
	double y = ctx->height - (double)(depth + 2) * ctx->fh;
	uint32_t h = name_hash(n->name, n->len);
	const struct fg_node *c;
	size_t llen;
	bool cut;

	if (w < ctx->min_width)
		return;
	fputs("<g><title>", ctx->f);
	put_escaped(ctx->f, n->name, n->len);
	fprintf(ctx->f, " (%" PRIu64 " samples, %.2f%%)</title>", n->count,
		100.0 * (double)n->count / (double)ctx->total);
	fprintf(ctx->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>", x, y, w, ctx->fh - 1.0,
		205 + h % 51, (h >> 8) % 231, (h >> 16) % 56);
	llen = label_len(n, w, &cut);
	if (llen) {
		fprintf(ctx->f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3.0, y + ctx->fh - 4.5);
		put_escaped(ctx->f, n->name, llen);
		fputs(cut ? "..</text>" : "</text>", ctx->f);
	}
	fputs("</g>\n", ctx->f);

	for (c = n->first; c; c = c->sibling) {
		draw(ctx, c, depth + 1, x);
		x += c->count * ctx->scale;
	}
}

int td_flamegraph_write(const struct td_folded *fo, FILE *f,
			const struct td_flamegraph_opts *opts)
{
	const char *title = opts && opts->title ? opts->title : "Flame Graph";
	unsigned int width = opts && opts->width ? opts->width : 1200;
	struct fg_ctx ctx = {
		.f = f,
		.fh = opts && opts->frame_height ? opts->frame_height : 16,
		.min_width = opts && opts->min_width > 0 ? opts->min_width : 0.1,
	};
	int ret;

	if (width < 100)
		width = 100;
	ctx.root = node_new("all", 3);
	if (!ctx.root)
		return -ENOMEM;
	ret = td_folded_foreach(fo, add_stack, &ctx);
	if (ret)
		goto out;
	ctx.total = ctx.root->count;
	ctx.scale = ctx.total ? (width - 2 * FG_XPAD) / (double)ctx.total : 0.0;
	/* Title band on top, one free line at the bottom. */
	ctx.height = (max_depth(&ctx, ctx.root) + 1 + 4) * ctx.fh;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"font-family=\"Verdana, sans-serif\" font-size=\"%.0f\">\n",
		width, ctx.height, width, ctx.height, FG_FONT_SIZE);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f8\"/>\n",
		width, ctx.height);
	fprintf(f, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\" font-size=\"%.0f\">",
		width / 2, 2 * ctx.fh, FG_FONT_SIZE + 5);
	put_escaped(f, title, strlen(title));
	fputs("</text>\n", f);
	if (ctx.total)
		draw(&ctx, ctx.root, 0, FG_XPAD);
	else
		fprintf(f, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">no samples</text>\n",
			width / 2, 3 * ctx.fh);
	fputs("</svg>\n", f);
	if (fflush(f) || ferror(f))
		ret = errno ? -errno : -EIO;
out:
	node_free(ctx.root);
	return ret;
}
