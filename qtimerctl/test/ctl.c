// SPDX-License-Identifier: GPL-2.0
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * Running qtimerctl and reading what it prints, for the qtimerctl_*_test
 * suites (ctl.h says what each function does).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

/* --- running qtimerctl -------------------------------------------------- */

static const char *qtimerctl_path(void)
{
	return getenv("QTIMERCTL") ?: t_program("qtimerctl");
}

int run_as(struct t_run *r, int how, const char *const *args)
{
	const char *argv[32] = { qtimerctl_path() };
	int i;

	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	return t_run(r, how == AS_NOBODY ? NOBODY : 0,
		      how == IN_NEW_NETNS ? CLONE_NEWNET : 0, (char *const *)argv);
}

bool module_loaded(void)
{
	return !access(QT_MODULE, F_OK);
}

/* --- reading qtimerctl's output ----------------------------------------- */

/*
 * The strict JSON syntax check: each function returns the end of what it
 * parsed (json_ws: the blanks), or NULL.
 */
static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_value(const char *p, int depth);

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (!strchr("\"\\/bfnrtu", *p))
				return NULL;
		}
		p++;
	}
	return p + 1;
}

static const char *json_number(const char *p)
{
	const char *start;

	if (*p == '-')
		p++;
	if (*p == '0') {
		p++;
	} else if (*p >= '1' && *p <= '9') {
		while (*p >= '0' && *p <= '9')
			p++;
	} else {
		return NULL;
	}
	if (*p == '.') {
		start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return NULL;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		start = p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return NULL;
	}
	return p;
}

/*
 * The rest of an object or an array, after its '{' or '[': members
 * ("key": value) or elements (value), separated by commas, up to close.
 */
static const char *json_container(const char *p, char close, int depth)
{
	p = json_ws(p);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			p = json_string(json_ws(p));
			if (!p)
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = json_value(p, depth + 1);
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p, int depth)
{
	if (depth > 32)
		return NULL;
	p = json_ws(p);
	switch (*p) {
	case '{':
		return json_container(p + 1, '}', depth);
	case '[':
		return json_container(p + 1, ']', depth);
	case '"':
		return json_string(p);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	}
	return json_number(p);
}

int json_lines(const char *text)
{
	int lines = 0;

	while (*text) {
		const char *end = json_value(text, 0);

		if (!end || *end != '\n')
			return -1;
		text = end + 1;
		lines++;
	}
	return lines;
}

long long json_num_after(const char *from, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(from, pat);
	return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}
