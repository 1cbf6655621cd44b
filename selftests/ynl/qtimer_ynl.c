// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What the YNL suites share (qtimer_ynl.h): running cli.py and qtimerctl,
 * and their JSON replies flattened to fields and compared.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "qtimer_ynl.h"

const char *ynl_root(void)
{
	static const char *root;

	if (!root)
		root = getenv("QT_YNL_ROOT") ?: t_beside("lib/ynl") ?: "/usr/local/lib/ynl";
	return root;
}

/*
 * cli.py --spec qtimer.yaml --output-json, then @args.  Byte code is not
 * written: the tree is shared by the root and nobody runs.
 */
int ynl_run(struct t_run *r, uid_t uid, const char *const *args)
{
	static char python[PATH_MAX], cli[PATH_MAX], spec[PATH_MAX];
	const char *argv[32] = { python, "-B", cli, "--spec", spec,
				 "--output-json" };
	int i, n = 6;

	snprintf(python, sizeof(python), "%s/bin/python3", ynl_root());
	snprintf(cli, sizeof(cli), "%s/tools/net/ynl/cli.py", ynl_root());
	snprintf(spec, sizeof(spec), "%s/Documentation/netlink/specs/qtimer.yaml",
		 ynl_root());
	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return t_run(r, uid, 0, (char *const *)argv);
}

int qtimerctl_run(struct t_run *r, uid_t uid, const char *const *args)
{
	const char *argv[32] = { getenv("QTIMERCTL") ?: t_program("qtimerctl") };
	int i, n = 1;

	for (i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	return t_run(r, uid, 0, (char *const *)argv);
}

void show_run(const char *what, const struct t_run *r)
{
	fprintf(stderr, "# %s: status %d\n# stdout: %.2000s\n# stderr: %.2000s\n",
		what, r->status, r->out, r->err);
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

/* A string without escapes (neither tool needs them for these replies). */
static const char *parse_string(const char *p, char *buf, size_t len)
{
	const char *end;

	if (*p != '"')
		return NULL;
	end = strchr(p + 1, '"');
	if (!end || memchr(p + 1, '\\', end - p - 1) || (size_t)(end - p) > len)
		return NULL;
	memcpy(buf, p + 1, end - p - 1);
	buf[end - p - 1] = '\0';
	return end + 1;
}

static const char *flatten(const char *p, char *path, struct fields *fs,
			   int depth)
{
	size_t plen = strlen(path);
	struct field *f;
	char key[64], *end;

	p = skip_ws(p);
	if (depth > 8)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';

		p = skip_ws(p + 1);
		if (*p == close)
			return p + 1;
		for (;;) {
			if (close == '}') {
				p = parse_string(skip_ws(p), key, sizeof(key));
				if (!p || plen + strlen(key) + 2 > 64)
					return NULL;
				p = skip_ws(p);
				if (*p++ != ':')
					return NULL;
				sprintf(path + plen, "%s%s", plen ? "." : "", key);
			}
			p = flatten(p, path, fs, depth + 1);
			path[plen] = '\0';
			if (!p)
				return NULL;
			p = skip_ws(p);
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (fs->nr == MAX_FIELDS)
		return NULL;
	f = &fs->f[fs->nr++];
	snprintf(f->key, sizeof(f->key), "%s", path);
	f->number = *p >= '0' && *p <= '9';
	if (f->number) {
		errno = 0;
		f->value = strtoull(p, &end, 10);
		return errno ? NULL : end;
	}
	if (*p == '"')
		return parse_string(p, key, sizeof(key));
	if (!strncmp(p, "null", 4) || !strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	return NULL;
}

/*
 * @text's fields below @prefix ("" for all), numbers only, with the prefix
 * taken off.  0, or -1 when @text is not the JSON it should be.
 */
int fields_of(const char *text, const char *prefix, struct fields *out)
{
	static struct fields all;
	size_t len = strlen(prefix);
	char path[64] = "";
	int i;

	all.nr = 0;
	out->nr = 0;
	text = flatten(text, path, &all, 0);
	if (!text || *skip_ws(text))
		return -1;
	for (i = 0; i < all.nr; i++) {
		const char *key = all.f[i].key;

		if (!all.f[i].number || strncmp(key, prefix, len))
			continue;
		out->f[out->nr] = all.f[i];
		snprintf(out->f[out->nr].key, sizeof(out->f[0].key), "%s", key + len);
		out->nr++;
	}
	return 0;
}

/*
 * qtimerctl's JSON names, turned into the spec's: "_" for "-", a list of
 * heaps for the multi-attr heap, and the clock's id (its name is only
 * qtimerctl's way of showing it, and is no number).
 */
void qtimerctl_to_spec_names(struct fields *fs)
{
	static const struct { const char *from, *to; } renames[] = {
		{ "heaps.clockid", "heap.clock" },
		{ "heaps.entries", "heap.entries" },
		{ "heaps.dead", "heap.dead" },
	};
	unsigned int i, j;
	char *c;

	for (i = 0; i < (unsigned int)fs->nr; i++) {
		for (j = 0; j < sizeof(renames) / sizeof(renames[0]); j++)
			if (!strcmp(fs->f[i].key, renames[j].from))
				strcpy(fs->f[i].key, renames[j].to);
		for (c = fs->f[i].key; *c; c++)
			if (*c == '_')
				*c = '-';
	}
}

/* Every field the same, by name and value and in the same order. */
bool fields_agree(const char *what, const struct fields *ynl,
			 const struct fields *ctl)
{
	int i;

	for (i = 0; i < ynl->nr || i < ctl->nr; i++) {
		const struct field *a = i < ynl->nr ? &ynl->f[i] : NULL;
		const struct field *b = i < ctl->nr ? &ctl->f[i] : NULL;

		if (a && b && !strcmp(a->key, b->key) && a->value == b->value)
			continue;
		fprintf(stderr, "# %s, field %d: ynl %s=%llu, qtimerctl %s=%llu\n",
			what, i, a ? a->key : "(none)", a ? a->value : 0,
			b ? b->key : "(none)", b ? b->value : 0);
		return false;
	}
	return true;
}

/* By name and value: the bytes after a key's NUL are not compared. */
bool fields_equal(const struct fields *a, const struct fields *b)
{
	int i;

	if (a->nr != b->nr)
		return false;
	for (i = 0; i < a->nr; i++)
		if (strcmp(a->f[i].key, b->f[i].key) ||
		    a->f[i].value != b->f[i].value)
			return false;
	return true;
}

/* For the log: the first field that differs between two readings. */
void show_moved(const struct fields *a, const struct fields *b)
{
	int i;

	for (i = 0; i < a->nr && i < b->nr; i++) {
		if (!strcmp(a->f[i].key, b->f[i].key) &&
		    a->f[i].value == b->f[i].value)
			continue;
		fprintf(stderr, "# field %d moved: %s=%llu, then %s=%llu\n", i,
			a->f[i].key, a->f[i].value, b->f[i].key, b->f[i].value);
		return;
	}
	if (a->nr != b->nr)
		fprintf(stderr, "# %d fields, then %d\n", a->nr, b->nr);
}

unsigned long long field(const struct fields *fs, const char *key)
{
	int i;

	for (i = 0; i < fs->nr; i++)
		if (!strcmp(fs->f[i].key, key))
			return fs->f[i].value;
	return ~0ULL;
}
