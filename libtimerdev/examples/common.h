/* SPDX-License-Identifier: LGPL-2.1 OR MIT */
/*
 * Copyright (C) 2026 The qtimer authors
 *
 * What the examples share that has nothing to do with timers, so that each
 * of them shows only its own use of libtimerdev: the command line (a table
 * of options, parsed with getopt(3) and printed as the usage), the verdict
 * every example ends with, a random index, and the delivery log that the
 * event-loop examples write with -o (test/delivery_log.c reads it).
 * hello.c, the smallest program, needs none of it.
 */
#ifndef _TD_EXAMPLES_COMMON_H
#define _TD_EXAMPLES_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* "-name arg", and where the argument goes: value points to the type said. */
struct example_option {
	char name;
	const char *arg;	/* what the usage calls the argument */
	enum {
		OPTION_FLAG,	/* bool, set by -name alone (no arg) */
		OPTION_UINT,	/* unsigned int */
		OPTION_INT64,	/* int64_t */
		OPTION_STRING,	/* char *, the argument itself */
	} type;
	void *value;
};

static inline void example_usage(const char *prog,
				 const struct example_option *options)
{
	fprintf(stderr, "usage: %s", prog);
	for (; options->name; options++) {
		if (options->type == OPTION_FLAG)
			fprintf(stderr, " [-%c]", options->name);
		else
			fprintf(stderr, " [-%c %s]", options->name, options->arg);
	}
	fprintf(stderr, "\n");
}

/*
 * The command line, against options (ended by one without a name): 0, or
 * -1 for an unknown option or a missing argument, once the usage is
 * printed.
 */
static inline int example_options(int argc, char **argv,
				  const struct example_option *options)
{
	const struct example_option *o;
	char optstring[64];
	size_t len = 0;
	int opt;

	for (o = options; o->name && len + 3 <= sizeof(optstring); o++) {
		optstring[len++] = o->name;
		if (o->type != OPTION_FLAG)
			optstring[len++] = ':';
	}
	optstring[len] = '\0';
	while ((opt = getopt(argc, argv, optstring)) != -1) {
		for (o = options; o->name && o->name != opt; o++)
			;
		if (!o->name) {		/* getopt's '?' */
			example_usage(argv[0], options);
			return -1;
		}
		switch (o->type) {
		case OPTION_FLAG:
			*(bool *)o->value = true;
			break;
		case OPTION_UINT:
			*(unsigned int *)o->value = strtoul(optarg, NULL, 0);
			break;
		case OPTION_INT64:
			*(int64_t *)o->value = strtoll(optarg, NULL, 0);
			break;
		case OPTION_STRING:
			*(char **)o->value = optarg;
			break;
		}
	}
	return 0;
}

/*
 * How an example ends: "name: ok: what" and status 0 when its checks found
 * no error, else "name: FAILED, errors errors" and status 1.
 */
static inline int example_verdict(const char *name, unsigned long errors,
				  const char *what)
{
	if (errors) {
		printf("%s: FAILED, %lu errors\n", name, errors);
		return 1;
	}
	printf("%s: ok: %s\n", name, what);
	return 0;
}

/* Uniform enough below n, for n up to 2^30 (RAND_MAX may be 2^15 - 1). */
static inline unsigned int example_random_index(unsigned int n)
{
	return (unsigned int)(((uint64_t)rand() << 16 ^ rand()) % n);
}

/*
 * -o: one line per record read, "cookie due expires_ns arrival": the
 * earliest time its timer was allowed to fire, the record's expiry and the
 * clock when it arrived, all CLOCK_MONOTONIC nanoseconds.  Nothing without
 * a log.
 */
static inline void example_log_delivery(FILE *log, uint64_t cookie,
					int64_t due, int64_t expires_ns,
					int64_t arrival)
{
	if (log)
		fprintf(log, "%llu %lld %lld %lld\n", (unsigned long long)cookie,
			(long long)due, (long long)expires_ns,
			(long long)arrival);
}

/* Opens the log, if -o asked for one: 0, or -1 once the error is said. */
static inline int example_open_log(const char *path, FILE **log)
{
	*log = NULL;
	if (path && !(*log = fopen(path, "w"))) {
		perror(path);
		return -1;
	}
	return 0;
}

/* Closes the log, if any: 1 (an error, said on stderr) if it failed. */
static inline unsigned int example_close_log(FILE *log, const char *path)
{
	if (!log || !fclose(log))
		return 0;
	perror(path);
	return 1;
}

#endif /* _TD_EXAMPLES_COMMON_H */
