/* libFuzzer over the simulator's choices (issue 28): coverage of the
 * protocol core guides the search for a history that breaks an invariant
 * or the settled ring's liveness, with the simulator's own checks as the
 * oracle. The input is a class (its first byte), a seed (the next eight)
 * and a tape (the rest): every random draw of the run, its plan (members,
 * timings, faults, aims) first, is the tape's next 8 bytes while it lasts
 * (simnet_tape), so libFuzzer's edits are the run's choices; then the run
 * goes on from the seed. A failing run prints the simulator's failure and
 * aborts, which libFuzzer keeps as a crash input; replay it with
 * `build/fuzz/fuzz_sim FILE`, or add it to test/fuzz/corpus/sim/ as a
 * regression seed once fixed.
 *
 * The simulator is compiled into this target whole (its main left out),
 * since its run is a static function of that one file. */
#define SIM_NO_MAIN
#include "sim/sim.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 9)
		return 0;
	enum sim_class cls = (enum sim_class)(data[0] % SIM_CLASS_COUNT_);
	uint64_t seed = 0;
	for (int k = 1; k <= 8; k++)
		seed = seed << 8 | data[k];
	simnet_tape(data + 9, size - 9);
	struct sim_result r;
	run_one(cls, seed, false, false, &r);
	simnet_tape(NULL, 0);
	if (r.failed) {
		fprintf(stderr, "FAIL class=%s seed=%" PRIu64 " (with the input's tape): %s: %s\n",
			class_names[cls], seed, r.inv, r.what);
		abort();
	}
	return 0;
}
