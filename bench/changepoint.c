// SPDX-License-Identifier: MIT
/* The change-point method of `ipclab history` (src/report/changepoint.c)
 * on synthetic series with a fixed seed: its false-alarm rate on flat
 * noisy series (normal noise, and skewed noise with outliers as benchmark
 * series have), and its detection delay after a step: how many points
 * after the step it needs before it reports a change at the step (within
 * one point). Prints the tables docs/history.md quotes. Not a test. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../src/report/changepoint.h"

static uint64_t rng = 2025;

static double uniform(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return ((double)((z ^ (z >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
}

/* A point: 1000 * level * noise; skewed: lognormal, and 5 % of the points
 * 1.3x to 2x slower (a preempted run). */
static double point(double level, double sd, int skewed)
{
	double v = 1000 * level;

	if (!skewed)
		return v * (1 + sd * gauss());
	v *= exp(sd * gauss());
	if (uniform() < 0.05)
		v *= 1.3 + 0.7 * uniform();
	return v;
}

static void false_alarms(const struct cp_opts *o, int skewed)
{
	static const size_t lens[] = { 20, 40, 100 };
	struct cp_change c[16];
	double v[100];

	for (size_t k = 0; k < 3; k++) {
		int alarms = 0, trials = 1000;

		for (int t = 0; t < trials; t++) {
			for (size_t i = 0; i < lens[k]; i++)
				v[i] = point(1, 0.05, skewed);
			alarms += cp_detect(v, NULL, lens[k], o, c, 16) > 0;
		}
		printf("| %s | %zu | %d of %d | %.1f %% |\n", skewed ? "skewed, outliers" : "normal",
		       lens[k], alarms, trials, 100.0 * alarms / trials);
	}
}

/* Points after the step before a change is reported at it (+-1), or -1
 * when 30 were not enough. */
static int delay(const struct cp_opts *o, double step, int skewed)
{
	enum { BEFORE = 30, MAXAFTER = 30 };
	struct cp_change c[16];
	double v[BEFORE + MAXAFTER];

	for (int i = 0; i < BEFORE + MAXAFTER; i++)
		v[i] = point(i < BEFORE ? 1 : step, 0.05, skewed);
	for (int after = 1; after <= MAXAFTER; after++) {
		int n = cp_detect(v, NULL, (size_t)(BEFORE + after), o, c, 16);

		for (int k = 0; k < n; k++)
			if (labs((long)c[k].index - BEFORE) <= 1)
				return after;
	}
	return -1;
}

static void delays(const struct cp_opts *o, int skewed)
{
	static const double steps[] = { 1.05, 1.1, 1.2, 1.5, 2.0 };

	for (size_t k = 0; k < 5; k++) {
		int found = 0, trials = 200, sum = 0, worst = 0;

		for (int t = 0; t < trials; t++) {
			int d = delay(o, steps[k], skewed);

			if (d < 0)
				continue;
			found++;
			sum += d;
			worst = d > worst ? d : worst;
		}
		printf("| %s | %.2fx | %d %% | %.1f | %d |\n", skewed ? "skewed, outliers" : "normal",
		       steps[k], 100 * found / trials, found ? (double)sum / found : NAN, worst);
	}
}

int main(void)
{
	struct cp_opts o;

	cp_opts_defaults(&o);
	printf("alpha %g, %u permutations, min segment %u; noise 5 %%\n\n", o.alpha, o.permutations,
	       o.min_segment);
	printf("| noise | points | series with a false change point | rate |\n| --- | --- | --- | --- |\n");
	false_alarms(&o, 0);
	false_alarms(&o, 1);
	printf("\n30 points before the step; points added after it one at a time, 30 at most\n\n");
	printf("| noise | step | found within 30 | mean delay (points) | worst |\n| --- | --- | --- | --- | --- |\n");
	delays(&o, 0);
	delays(&o, 1);
	return 0;
}
