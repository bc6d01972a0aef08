// SPDX-License-Identifier: GPL-2.0
/*
 * Event patterns made into events (see event_glob.h).
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <tracefs.h>

#include "event_glob.h"
#include "log.h"

struct spec_list {
	struct td_event_spec *v;
	size_t nr, cap;
};

static bool has_pattern(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static bool is_pattern(const struct td_event_spec *e)
{
	return e->bare || has_pattern(e->system) || has_pattern(e->name);
}

static bool listed(const struct td_event_spec *v, size_t nr, const char *sys, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!v[i].bare && !strcmp(v[i].system, sys) && !strcmp(v[i].name, name))
			return true;
	return false;
}

static int push(struct spec_list *l, const char *sys, const char *name, const char *filter)
{
	struct td_event_spec *e;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;

		e = realloc(l->v, cap * sizeof(*e));
		if (!e)
			return -1;
		l->v = e;
		l->cap = cap;
	}
	e = &l->v[l->nr];
	*e = (struct td_event_spec){ .system = strdup(sys), .name = strdup(name) };
	if (filter)
		e->filter = strdup(filter);
	if (!e->system || !e->name || (filter && !e->filter)) {
		td_event_spec_free(e);
		return -1;
	}
	l->nr++;
	return 0;
}

/*
 * Append to @l the events of the systems matching @sys whose names match
 * @name, unless given by name in @cfg or already in @l; *@found counts
 * every match. 0 or -1 (out of memory).
 */
static int match(struct spec_list *l, const struct td_config *cfg, char **systems,
		 const char *sys, const char *name, const char *filter, size_t *found)
{
	for (size_t i = 0; systems[i]; i++) {
		char **events;
		int ret = 0;

		if (fnmatch(sys, systems[i], 0) || (!strcmp(systems[i], "ftrace") &&
						    strcmp(sys, "ftrace")))
			continue;
		events = tracefs_system_events(NULL, systems[i]);
		for (size_t j = 0; events && events[j] && !ret; j++) {
			if (fnmatch(name, events[j], 0))
				continue;
			(*found)++;
			if (listed(cfg->events, cfg->nr_events, systems[i], events[j]) ||
			    listed(l->v, l->nr, systems[i], events[j]))
				continue;
			ret = push(l, systems[i], events[j], filter);
		}
		tracefs_list_free(events);
		if (ret)
			return ret;
	}
	return 0;
}

int td_events_expand(struct td_config *cfg)
{
	struct spec_list l = { 0 };
	char **systems = NULL;
	size_t i;

	for (i = 0; i < cfg->nr_events && !is_pattern(&cfg->events[i]); i++)
		;
	if (i == cfg->nr_events)
		return 0;
	systems = tracefs_event_systems(NULL);
	if (!systems) {
		td_err("cannot list the event systems in %s/events", tracefs_tracing_dir());
		return -1;
	}
	for (i = 0; i < cfg->nr_events; i++) {
		const struct td_event_spec *e = &cfg->events[i];
		size_t found = 0;

		if (!is_pattern(e)) {
			if (!listed(l.v, l.nr, e->system, e->name) &&
			    push(&l, e->system, e->name, e->filter))
				goto nomem;
			continue;
		}
		/*
		 * As trace-cmd record -e all: every system (the tracer's own
		 * excepted), a system named "all" among them.
		 */
		if (e->bare && !strcmp(e->system, "all")) {
			if (match(&l, cfg, systems, "*", "*", e->filter, &found))
				goto nomem;
		} else if (match(&l, cfg, systems, e->system, e->name, e->filter, &found)) {
			goto nomem;
		}
		/* A bare word that is no system: an event of that name, in any system. */
		if (!found && e->bare &&
		    match(&l, cfg, systems, "*", e->system, e->filter, &found))
			goto nomem;
		if (!found) {
			/* Its events exist, as the tracer's own records: none can be enabled. */
			if (!strcmp(e->system, "ftrace"))
				td_err("-e %s%s%s: the ftrace system holds the tracer's own records "
				       "(function, kernel_stack, ...), which cannot be traced as "
				       "events", e->system, e->bare ? "" : ":", e->bare ? "" : e->name);
			else if (e->bare)
				td_err("no event system or event %s %s (in %s/events)",
				       has_pattern(e->system) ? "matches" : "is named", e->system,
				       tracefs_tracing_dir());
			else
				td_err("no event matches %s:%s (in %s/events)", e->system, e->name,
				       tracefs_tracing_dir());
			goto fail;
		}
	}
	tracefs_list_free(systems);
	td_config_clear_events(cfg);
	cfg->events = l.v;
	cfg->nr_events = l.nr;
	return 0;
nomem:
	td_err("out of memory");
fail:
	for (i = 0; i < l.nr; i++)
		td_event_spec_free(&l.v[i]);
	free(l.v);
	tracefs_list_free(systems);
	return -1;
}
